package store

import (
	"context"
	"fmt"
	"sort"

	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/importer"
	"github.com/jackc/pgx/v5"
)

// ApplyResult says what an import changed.
type ApplyResult struct {
	EntitiesChanged  int
	TagsUpserted     int
	Claims           int
	AddressesChanged int // attributions whose entity, label or confidence changed (republished)
	// Conflicts are addresses of the batch that another entity claims too (in this batch or
	// another source), with the winner by confidence.
	Conflicts []importer.Conflict
}

const chunk = 5000

// MissingEntities returns the ids among ids that are neither in the store nor in defined.
func (s *Store) MissingEntities(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id FROM unnest($1::text[]) AS u(id) WHERE NOT EXISTS (SELECT 1 FROM intel.entities e WHERE e.id = u.id) ORDER BY id`, ids)
	if err != nil {
		return nil, fmt.Errorf("check entities: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// ApplyBatch writes a parsed import in one transaction: entities, tags, the source's claims
// (replacing its earlier claims on the same addresses) and address tags, then re-resolves the
// attribution of every address the batch names. Entities whose details changed get a new
// version, and so do the addresses attributed or predicted to them, so the change is published.
// Applying the same batch twice changes nothing the second time.
func (s *Store) ApplyBatch(ctx context.Context, b importer.Batch) (ApplyResult, error) {
	res := ApplyResult{Claims: len(b.Claims)}
	err := s.inTx(ctx, true, func(tx pgx.Tx) error {
		n, err := upsertEntities(ctx, tx, b.Entities)
		if err != nil {
			return err
		}
		res.EntitiesChanged = n
		for _, t := range b.Tags {
			if _, err := tx.Exec(ctx, `INSERT INTO intel.tags (id, label, rank, disable_page, exclude_entities, chain)
				VALUES ($1, $2, $3, $4, $5, $6)
				ON CONFLICT (id) DO UPDATE SET label = excluded.label, rank = excluded.rank, disable_page = excluded.disable_page,
					exclude_entities = excluded.exclude_entities, chain = excluded.chain`,
				t.ID, t.Label, t.Rank, t.DisablePage, t.ExcludeEntities, t.Chain); err != nil {
				return fmt.Errorf("upsert tag %s: %w", t.ID, err)
			}
		}
		res.TagsUpserted = len(b.Tags)
		for i := 0; i < len(b.Claims); i += chunk {
			part := b.Claims[i:min(i+chunk, len(b.Claims))]
			n, err := applyClaims(ctx, tx, b.Source, part)
			if err != nil {
				return err
			}
			res.AddressesChanged += n
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	conflicts, err := s.conflicts(ctx, b.Claims)
	if err != nil {
		return res, err
	}
	res.Conflicts = append(append([]importer.Conflict(nil), b.Conflicts...), conflicts...)
	return res, nil
}

func upsertEntities(ctx context.Context, tx pgx.Tx, es []attribution.Entity) (int, error) {
	changed := 0
	var ids []string
	for _, e := range es {
		tag, err := tx.Exec(ctx, `INSERT INTO intel.entities AS x (id, name, type, note, description, website, twitter, linkedin, service, source, version)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'import', nextval('intel.attribution_version'))
			ON CONFLICT (id) DO UPDATE SET name = excluded.name, type = excluded.type, note = excluded.note,
				description = excluded.description, website = excluded.website, twitter = excluded.twitter,
				linkedin = excluded.linkedin, service = excluded.service, version = excluded.version, updated_at = now()
			WHERE (x.name, x.type, x.note, x.description, x.website, x.twitter, x.linkedin, x.service) IS DISTINCT FROM
				(excluded.name, excluded.type, excluded.note, excluded.description, excluded.website, excluded.twitter, excluded.linkedin, excluded.service)`,
			e.ID, e.Name, e.Type, e.Note, e.Description, e.Website, e.Twitter, e.LinkedIn, e.Service)
		if err != nil {
			return 0, fmt.Errorf("upsert entity %s: %w", e.ID, err)
		}
		if tag.RowsAffected() > 0 {
			changed++
			ids = append(ids, e.ID)
		}
	}
	if len(ids) > 0 {
		// A renamed entity changes the attribution events of its addresses.
		if _, err := tx.Exec(ctx, `UPDATE intel.addresses SET version = nextval('intel.attribution_version'), updated_at = now()
			WHERE entity_id = ANY($1) OR predicted_entity_id = ANY($1) OR deposit_service_id = ANY($1)`, ids); err != nil {
			return 0, fmt.Errorf("re-version addresses of changed entities: %w", err)
		}
	}
	return changed, nil
}

func applyClaims(ctx context.Context, tx pgx.Tx, source string, cs []importer.Claim) (int, error) {
	n := len(cs)
	cts, addrs, ents, labels := make([]string, n), make([]string, n), make([]*string, n), make([]string, n)
	confs := make([]float32, n)
	var tct, taddr, tid, tparams []string
	seenTag := map[[4]string]bool{}
	for i, c := range cs {
		cts[i], addrs[i], labels[i], confs[i] = c.ChainType, c.Address, c.Label, c.Confidence
		if c.EntityID != "" {
			e := c.EntityID
			ents[i] = &e
		}
		for _, t := range c.Tags {
			k := [4]string{c.ChainType, c.Address, t.ID, t.Params}
			if seenTag[k] {
				continue
			}
			seenTag[k] = true
			tct, taddr, tid, tparams = append(tct, c.ChainType), append(taddr, c.Address), append(tid, t.ID), append(tparams, t.Params)
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO intel.claims AS c (chain_type, address, source, entity_id, label, confidence)
		SELECT u.ct, u.addr, $1, u.ent, u.label, u.conf FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::real[]) AS u(ct, addr, ent, label, conf)
		ON CONFLICT (chain_type, address, source) DO UPDATE SET entity_id = excluded.entity_id, label = excluded.label,
			confidence = excluded.confidence, updated_at = now()
		WHERE (c.entity_id, c.label, c.confidence) IS DISTINCT FROM (excluded.entity_id, excluded.label, excluded.confidence)`,
		source, cts, addrs, ents, labels, confs); err != nil {
		return 0, fmt.Errorf("upsert claims of %s: %w", source, err)
	}
	// The source's tags on these addresses are replaced by the batch's: only the tags the batch
	// no longer has are deleted and only new ones written, so importing the same file again (every
	// start of the local stack, a re-run) changes no row and logs no change.
	if _, err := tx.Exec(ctx, `WITH keep AS (SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::text[]) AS n(ct, addr, tag, params))
		DELETE FROM intel.address_tags at USING (SELECT DISTINCT * FROM unnest($2::text[], $3::text[]) AS u(ct, addr)) u
		WHERE at.source = $1 AND at.chain_type = u.ct AND at.address = u.addr
			AND NOT EXISTS (SELECT FROM keep n WHERE n.ct = at.chain_type AND n.addr = at.address AND n.tag = at.tag_id AND n.params = at.params)`,
		source, cts, addrs, tct, taddr, tid, tparams); err != nil {
		return 0, fmt.Errorf("replace tags of %s: %w", source, err)
	}
	if len(tid) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO intel.address_tags AS at (chain_type, address, tag_id, params, source)
			SELECT * , $1 FROM unnest($2::text[], $3::text[], $4::text[], $5::text[])
			ON CONFLICT (chain_type, address, tag_id, params) DO UPDATE SET source = excluded.source
			WHERE at.source IS DISTINCT FROM excluded.source`,
			source, tct, taddr, tid, tparams); err != nil {
			return 0, fmt.Errorf("insert tags of %s: %w", source, err)
		}
	}
	return resolve(ctx, tx, cts, addrs)
}

// resolve recomputes the attribution of the given addresses from their claims and gives every
// changed one a new version. The entity is that of the most confident claim naming one (ties go
// to non-GraphSense sources, then by source name), the label that claim's, or the most confident
// labelled claim's when it has none.
func resolve(ctx context.Context, tx pgx.Tx, cts, addrs []string) (int, error) {
	tag, err := tx.Exec(ctx, `WITH k AS (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS k(chain_type, address)),
		ent AS (
			SELECT DISTINCT ON (c.chain_type, c.address) c.chain_type, c.address, c.entity_id, c.label, c.confidence, c.source
			FROM intel.claims c JOIN k USING (chain_type, address)
			WHERE c.entity_id IS NOT NULL
			ORDER BY c.chain_type, c.address, c.confidence DESC, (c.source LIKE 'graphsense:%'), c.source),
		lab AS (
			SELECT DISTINCT ON (c.chain_type, c.address) c.chain_type, c.address, c.label, c.confidence, c.source
			FROM intel.claims c JOIN k USING (chain_type, address)
			WHERE c.label <> ''
			ORDER BY c.chain_type, c.address, c.confidence DESC, (c.source LIKE 'graphsense:%'), c.source),
		res AS (
			SELECT k.chain_type, k.address, ent.entity_id,
				COALESCE(NULLIF(ent.label, ''), lab.label, '') AS label,
				COALESCE(ent.confidence, lab.confidence, 0) AS confidence,
				COALESCE(ent.source, lab.source, '') AS source
			FROM k LEFT JOIN ent USING (chain_type, address) LEFT JOIN lab USING (chain_type, address))
		INSERT INTO intel.addresses AS a (chain_type, address, entity_id, label, confidence, source, version)
		SELECT chain_type, address, entity_id, label, confidence, source, nextval('intel.attribution_version') FROM res
		ON CONFLICT (chain_type, address) DO UPDATE SET entity_id = excluded.entity_id, label = excluded.label,
			confidence = excluded.confidence, source = excluded.source, version = excluded.version, updated_at = now()
		WHERE (a.entity_id, a.label, a.confidence, a.source) IS DISTINCT FROM
			(excluded.entity_id, excluded.label, excluded.confidence, excluded.source)`, cts, addrs)
	if err != nil {
		return 0, fmt.Errorf("resolve attributions: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// conflicts lists the batch's addresses that claims of two different entities name, with the
// winner (the resolved entity) and each loser.
func (s *Store) conflicts(ctx context.Context, cs []importer.Claim) ([]importer.Conflict, error) {
	var out []importer.Conflict
	for i := 0; i < len(cs); i += chunk {
		part := cs[i:min(i+chunk, len(cs))]
		cts, addrs := make([]string, len(part)), make([]string, len(part))
		for j, c := range part {
			cts[j], addrs[j] = c.ChainType, c.Address
		}
		rows, err := s.pool.Query(ctx, `SELECT a.chain_type, a.address, a.entity_id, a.source, a.confidence, c.entity_id, c.source, c.confidence
			FROM unnest($1::text[], $2::text[]) AS k(chain_type, address)
			JOIN intel.addresses a USING (chain_type, address)
			JOIN intel.claims c USING (chain_type, address)
			WHERE a.entity_id IS NOT NULL AND c.entity_id IS NOT NULL AND c.entity_id <> a.entity_id
			ORDER BY a.chain_type, a.address, c.source`, cts, addrs)
		if err != nil {
			return nil, fmt.Errorf("find conflicts: %w", err)
		}
		for rows.Next() {
			var c importer.Conflict
			if err := rows.Scan(&c.ChainType, &c.Address, &c.Winner, &c.WinnerSource, &c.WinnerConfidence, &c.Loser, &c.LoserSource, &c.LoserConfidence); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	return out, nil
}
