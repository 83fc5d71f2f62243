package read

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/chainintel/chainintel/services/transfers/internal/store/records"
	"github.com/jackc/pgx/v5"
)

//go:embed sql/group_sizes.sql
var groupSizesSQL string

//go:embed sql/entity_types.sql
var entityTypesSQL string

// EntityTypes lists the entity types the read model holds (with addresses now or before): what
// type:<entityType> may name beside the documented ones (app).
func (s *Reader) EntityTypes(ctx context.Context) ([]string, error) {
	rows, err := s.db.Query(ctx, entityTypesSQL)
	if err != nil {
		return nil, fmt.Errorf("entity types: %w", err)
	}
	ts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("entity types: %w", err)
	}
	return ts, nil
}

// AddrSet is a set of addresses: listed ones, plus those the attribution read model gives to
// operator entities (as entity or deposit service), entity types and deposit services. The
// model's part is resolved inside the query, so an exchange with thousands of deposit
// addresses or a whole entity type never travels as a list.
type AddrSet struct {
	Addrs    []string // listed addresses (addresses, user entities, a caller's additions)
	Entities []string // operator entity ids: their addresses and deposit addresses
	Types    []string // entity types
	Deposits []string // deposit addresses of these entities
	// Size is how many addresses the set holds (at most; a listed address may also come from
	// the model); it picks the query plan.
	Size int

	// live names the set's model groups that were live when SetSize read them (liveKnown):
	// the plans then need not ask again.
	live      []string
	liveKnown bool
	// version is the membership epoch and removal count SetSize read with the groups
	// (versioned): a count read under it cannot have gone down while they stay (capCache).
	version   [2]int64
	versioned bool
}

// Addrs returns a set of listed addresses.
func Addrs(a []string) AddrSet { return AddrSet{Addrs: a, Size: len(a)} }

// Empty reports whether the set holds nothing.
func (s AddrSet) Empty() bool { return s.Size == 0 }

func (s AddrSet) modelled() bool { return len(s.Entities)+len(s.Types)+len(s.Deposits) > 0 }

// modelSQL is a query yielding the addresses of the set's model part.
func (b *sqlb) modelSQL(s AddrSet) string {
	var parts []string
	if len(s.Entities) > 0 {
		e := b.arg(s.Entities)
		parts = append(parts,
			"SELECT address FROM transfers.attributions WHERE entity_id = ANY("+e+"::text[]) AND entity_id <> ''",
			"SELECT address FROM transfers.attributions WHERE deposit_service_id = ANY("+e+"::text[]) AND deposit_service_id <> ''")
	}
	if len(s.Types) > 0 {
		parts = append(parts, "SELECT address FROM transfers.attributions WHERE entity_type = ANY("+b.arg(s.Types)+"::text[]) AND entity_type <> ''")
	}
	if len(s.Deposits) > 0 {
		parts = append(parts, "SELECT address FROM transfers.attributions WHERE deposit_service_id = ANY("+b.arg(s.Deposits)+"::text[]) AND deposit_service_id <> ''")
	}
	return strings.Join(parts, " UNION ALL ")
}

// source is a query yielding every address of the set (possibly repeated).
func (b *sqlb) source(s AddrSet) string {
	var parts []string
	if len(s.Addrs) > 0 {
		parts = append(parts, "SELECT unnest("+b.arg(s.Addrs)+"::text[])")
	}
	if s.modelled() {
		parts = append(parts, b.modelSQL(s))
	}
	if len(parts) == 0 {
		return "SELECT NULL::text WHERE false"
	}
	return strings.Join(parts, " UNION ALL ")
}

// member is "col is in s". A listed set is a constant list (index probes). The read model's
// part, on the partitioned chain tables, is a probe of the attribution indexes per row
// (correlated EXISTS): with it the planner walks the sort key's index and stops at the first
// page, where a join with thousands of addresses would read and sort every match. On rollup
// tables it is a semi-join with the set, planned freely.
func (b *sqlb) member(col string, s AddrSet) string {
	if !s.modelled() {
		if len(s.Addrs) == 1 && b.rows {
			// One address as an equality: the planner then uses (address, sort key) indexes
			// for ordered pages, where with "= ANY" it walks the global sort-key index instead.
			return col + " = " + b.arg(s.Addrs[0])
		}
		return col + " = ANY(" + b.arg(s.Addrs) + "::text[])"
	}
	if !b.rows {
		return col + " IN (" + b.source(s) + ")"
	}
	if b.counting {
		// Counting reads every match: one hash of the set beats a probe per row; col is hidden
		// so the planner does not probe its index once per address and partition instead.
		return "(" + col + " || '') IN (" + b.source(s) + ")"
	}
	var or []string
	if len(s.Addrs) > 0 {
		or = append(or, col+" = ANY("+b.arg(s.Addrs)+"::text[])")
	}
	// OFFSET 0 keeps each EXISTS a probe per row: without it the planner may turn it into a
	// hashed subplan, and over a partitioned table it builds that hash once per partition and
	// subplan: an exchange's addresses, hashed for every subplan and monthly partition before
	// the first row of a page sorted by USD or value, cost far more than the probes.
	probe := func(attr string, vals []string) {
		if len(vals) > 0 {
			or = append(or, "EXISTS (SELECT 1 FROM transfers.attributions a WHERE a."+attr+" = ANY("+b.arg(vals)+
				"::text[]) AND a."+attr+" <> '' AND a.address = "+col+" OFFSET 0)")
		}
	}
	probe("entity_id", s.Entities)
	probe("deposit_service_id", s.Entities)
	probe("entity_type", s.Types)
	probe("deposit_service_id", s.Deposits)
	return "(" + strings.Join(or, " OR ") + ")"
}

// notMember is "col is not in s"; on rollups and in counts a modelled set is an anti-join.
func (b *sqlb) notMember(col string, s AddrSet) string {
	if !s.modelled() || b.rows && !b.counting {
		return "NOT " + b.member(col, s)
	}
	return "NOT EXISTS (SELECT 1 FROM (" + b.source(s) + ") s(a) WHERE s.a = " + col + ")"
}

// ResolveSet is set as the read plans take it: sized (SetSize), and, when it is modelled and
// holds at most Options.ListSetMax addresses, listed address by address (its addresses' own
// index ranges then drive the reads). It also returns which of the entities, entity types and
// deposit services the model knows (SetSize).
func (s *Reader) ResolveSet(ctx context.Context, set AddrSet) (AddrSet, map[string]bool, error) {
	sized, known, err := s.SetSize(ctx, set)
	if err != nil || sized.Size > s.opt.ListSetMax || !sized.modelled() {
		return sized, known, err
	}
	addrs, err := s.SetAddresses(ctx, sized)
	if err != nil {
		return sized, nil, err
	}
	return Addrs(addrs), known, nil
}

// SetSize returns set with its Size: the addresses the read model gives to entities, types and
// deposit services (from the groups' sizes: a sum, so at most the set's size) plus the listed
// ones. It also returns which of the entities the model knows at all (by id), and which of its
// types and deposit services hold addresses ("type:<t>", "deposit:<id>"), and keeps in the set which
// of its groups are live, for the plans (liveGroup).
func (s *Reader) SetSize(ctx context.Context, set AddrSet) (AddrSet, map[string]bool, error) {
	known := map[string]bool{}
	if !set.modelled() {
		set.Size = len(set.Addrs)
		return set, known, nil
	}
	var grps []string
	for _, e := range set.Entities {
		grps = append(grps, records.EntityGroup(e))
	}
	for _, t := range set.Types {
		grps = append(grps, records.TypeGroup(t))
	}
	for _, d := range set.Deposits {
		grps = append(grps, records.DepositGroup(d))
	}
	rows, err := s.db.Query(ctx, groupSizesSQL, grps)
	if err != nil {
		return set, nil, fmt.Errorf("size of address set: %w", err)
	}
	defer rows.Close()
	n := len(set.Addrs)
	set.live, set.versioned = nil, false
	for rows.Next() {
		var g string
		var size int
		var live bool
		if err := rows.Scan(&g, &size, &live, &set.version[0], &set.version[1]); err != nil {
			return set, nil, fmt.Errorf("size of address set: %w", err)
		}
		n += size
		switch g[:2] {
		case "e:":
			known[g[2:]] = true
		case "t:":
			known["type:"+g[2:]] = true
		case "d:":
			known["deposit:"+g[2:]] = true
		}
		if live {
			set.live = append(set.live, g)
		}
		set.versioned = true
	}
	if err := rows.Err(); err != nil {
		return set, nil, fmt.Errorf("size of address set: %w", err)
	}
	set.Size, set.liveKnown = n, true
	return set, known, nil
}

// SetAddresses lists the distinct addresses of a set.
func (s *Reader) SetAddresses(ctx context.Context, set AddrSet) ([]string, error) {
	b := s.newb(sqlb{})
	rows, err := s.db.Query(ctx, "SELECT DISTINCT a FROM ("+b.source(set)+") s(a) ORDER BY a", b.args...)
	if err != nil {
		return nil, fmt.Errorf("addresses of set: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
