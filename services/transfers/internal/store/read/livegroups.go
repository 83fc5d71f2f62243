package read

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"

	"github.com/chainintel/chainintel/services/transfers/internal/store/records"
	"github.com/jackc/pgx/v5"
)

//go:embed sql/group_live.sql
var groupLiveSQL string

//go:embed sql/entity_groups_disjoint.sql
var entityGroupsDisjointSQL string

//go:embed sql/outside_group.sql
var outsideGroupSQL string

//go:embed sql/live_groups_count.sql
var liveGroupsCountSQL string

// The live attribution groups a set stands for: reads through their rollups (docs/transfers.md,
// "Query plans") start from these.

// singleGroup names the attribution group that a set's read-model part is, when that part is
// exactly one entity, one entity type or one deposit service.
func singleGroup(s AddrSet) (string, bool) {
	switch {
	case len(s.Entities) == 1 && len(s.Types)+len(s.Deposits) == 0:
		return records.EntityGroup(s.Entities[0]), true
	case len(s.Types) == 1 && len(s.Entities)+len(s.Deposits) == 0:
		return records.TypeGroup(s.Types[0]), true
	case len(s.Deposits) == 1 && len(s.Entities)+len(s.Types) == 0:
		return records.DepositGroup(s.Deposits[0]), true
	}
	return "", false
}

// liveGroup returns the live group standing for the read-model part of set, or "". A set whose
// size SetSize read already knows which of its groups were live then. A group that turned live
// since is read as not live (a slower plan, the same answer); a live group stops being live
// only once it has no addresses left, when its rollups and the model agree it holds nothing.
func (s *Reader) liveGroup(ctx context.Context, set AddrSet) (string, error) {
	g, ok := singleGroup(set)
	if !ok {
		return "", nil
	}
	if set.liveKnown {
		if slices.Contains(set.live, g) {
			return g, nil
		}
		return "", nil
	}
	var live bool
	err := s.db.QueryRow(ctx, groupLiveSQL, g).Scan(&live)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !live {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("group %s: %w", g, err)
	}
	return g, nil
}

// maxUnionGroups is the most entities a base may name and still be counted from the rollups
// of their groups (it reads each group's figures and every pair between them).
const maxUnionGroups = 8

// disjointEntityGroups returns the live groups of a set that is several entities and nothing
// else, when every one is live and no address is in two of them (an address of one entity that
// is a deposit address of another): their union's figures are then sums of theirs. Otherwise
// it returns nil.
func (s *Reader) disjointEntityGroups(ctx context.Context, set AddrSet) ([]string, error) {
	if len(set.Addrs)+len(set.Types)+len(set.Deposits) > 0 || len(set.Entities) < 2 || len(set.Entities) > maxUnionGroups {
		return nil, nil
	}
	gs := make([]string, 0, len(set.Entities))
	seen := map[string]bool{}
	for _, e := range set.Entities {
		g := records.EntityGroup(e)
		if seen[g] {
			continue
		}
		seen[g] = true
		gs = append(gs, g)
	}
	var live int
	var shared bool
	if err := s.db.QueryRow(ctx, entityGroupsDisjointSQL, gs, set.Entities).Scan(&live, &shared); err != nil {
		return nil, fmt.Errorf("groups of %v: %w", set.Entities, err)
	}
	if live < len(gs) || shared {
		return nil, nil
	}
	return gs, nil
}

// pureGroup returns the live group that is the whole of set (no listed addresses), or "".
func (s *Reader) pureGroup(ctx context.Context, set AddrSet) (string, error) {
	if len(set.Addrs) > 0 {
		return "", nil
	}
	return s.liveGroup(ctx, set)
}

// outsideGroup returns the addresses of addrs that are not in group g.
func (s *Reader) outsideGroup(ctx context.Context, addrs []string, g string) ([]string, error) {
	if len(addrs) == 0 {
		return nil, nil
	}
	rows, err := s.db.Query(ctx, outsideGroupSQL, addrs, g)
	if err != nil {
		return nil, fmt.Errorf("addresses outside %s: %w", g, err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// inGroup is the condition "col is an address of group g" (an index probe of the read model).
func (b *sqlb) inGroup(col, g string) string {
	return "EXISTS (SELECT 1 FROM transfers.attributions t WHERE t.address = " + col + " AND " + b.arg(g) +
		"::text = ANY(transfers.attribution_groups(t.entity_id, t.entity_type, t.deposit_service_id)))"
}

// simpleSide is a from/to filter that is absent, one live group, or the exclusion of one.
func (s *Reader) simpleSide(ctx context.Context, f AddrFilter) (g string, negate, ok bool, err error) {
	switch {
	case !f.Active():
		return "", false, true, nil
	case f.Only && f.NotIn.Empty():
		g, err = s.pureGroup(ctx, f.In)
		return g, false, g != "", err
	case !f.Only && !f.NotIn.Empty():
		g, err = s.pureGroup(ctx, f.NotIn)
		return g, true, g != "", err
	}
	return "", false, false, nil
}

func typeGroups(types []string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = records.TypeGroup(t)
	}
	return out
}

// liveTypes reports whether set is entity types and nothing else, every one a live group: a
// pair row's from_t/to_t then decide membership (entityPairSides).
func (s *Reader) liveTypes(ctx context.Context, set AddrSet) (bool, error) {
	if len(set.Types) == 0 || len(set.Addrs)+len(set.Entities)+len(set.Deposits) > 0 {
		return false, nil
	}
	gs := typeGroups(set.Types)
	slices.Sort(gs)
	gs = slices.Compact(gs)
	if set.liveKnown {
		return !slices.ContainsFunc(gs, func(g string) bool { return !slices.Contains(set.live, g) }), nil
	}
	var n int
	if err := s.db.QueryRow(ctx, liveGroupsCountSQL, gs).Scan(&n); err != nil {
		return false, fmt.Errorf("live types: %w", err)
	}
	return n == len(gs), nil
}

// typeSides sets f.typed for the sets of f's sides that are live entity types.
func (s *Reader) typeSides(ctx context.Context, f *TransferFilter) error {
	for _, c := range []struct {
		set AddrSet
		use bool
		out *bool
	}{{f.From.In, f.From.Only, &f.typed.fromIn}, {f.From.NotIn, !f.From.NotIn.Empty(), &f.typed.fromNot},
		{f.To.In, f.To.Only, &f.typed.toIn}, {f.To.NotIn, !f.To.NotIn.Empty(), &f.typed.toNot}} {
		*c.out = false
		if !c.use {
			continue
		}
		ok, err := s.liveTypes(ctx, c.set)
		if err != nil {
			return err
		}
		*c.out = ok
	}
	return nil
}
