package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/jackc/pgx/v5"
)

// AttributionRow is one address's attribution as it is published.
type AttributionRow struct {
	attribution.Address
	Entity      *attribution.Entity
	Predicted   *attribution.Entity
	UpdatedAtMs int64
}

const attributionSelect = `SELECT a.chain_type, a.address, COALESCE(a.entity_id, ''), a.label, a.confidence, a.source,
		COALESCE(a.predicted_entity_id, ''), COALESCE(a.deposit_service_id, ''), a.is_contract, a.cluster_ids, a.version,
		(extract(epoch FROM a.updated_at) * 1000)::bigint,
		e.id, e.name, e.type, e.note, e.service, e.website, e.twitter, e.linkedin, e.description,
		p.id, p.name, p.type, p.note, p.service, p.website, p.twitter, p.linkedin, p.description
	FROM intel.addresses a
	LEFT JOIN intel.entities e ON e.id = a.entity_id
	LEFT JOIN intel.entities p ON p.id = a.predicted_entity_id `

func scanAttributionRows(rows pgx.Rows) ([]AttributionRow, error) {
	defer rows.Close()
	var out []AttributionRow
	for rows.Next() {
		var r AttributionRow
		var eid, en, et, eno, es, ew, etw, el, ed, pid, pn, pt, pno, ps, pw, ptw, pl, pd *string
		if err := rows.Scan(&r.ChainType, &r.Address.Address, &r.EntityID, &r.Label, &r.Confidence, &r.Source,
			&r.PredictedEntity, &r.DepositServiceID, &r.IsContract, &r.ClusterIDs, &r.Version, &r.UpdatedAtMs,
			&eid, &en, &et, &eno, &es, &ew, &etw, &el, &ed, &pid, &pn, &pt, &pno, &ps, &pw, &ptw, &pl, &pd); err != nil {
			return nil, err
		}
		if eid != nil {
			r.Entity = &attribution.Entity{ID: *eid, Name: *en, Type: *et, Note: *eno, Service: *es, Website: *ew, Twitter: *etw, LinkedIn: *el, Description: *ed}
		}
		if pid != nil {
			r.Predicted = &attribution.Entity{ID: *pid, Name: *pn, Type: *pt, Note: *pno, Service: *ps, Website: *pw, Twitter: *ptw, LinkedIn: *pl, Description: *pd}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// PublishPending hands the attributions changed since the publish cursor, in version order and
// at most limit, to publish, and advances the cursor when publish returns nil. The cursor row is
// locked meanwhile, so concurrent publishers (several replicas, an import command) take turns
// and a change is published at least once. It returns how many rows it handed over.
func (s *Store) PublishPending(ctx context.Context, limit int, publish func(context.Context, []AttributionRow) error) (int, error) {
	n := 0
	err := s.inTx(ctx, false, func(tx pgx.Tx) error {
		var cursor int64
		if err := tx.QueryRow(ctx, "SELECT version FROM intel.publish_cursor WHERE name = 'attributions' FOR UPDATE").Scan(&cursor); err != nil {
			return fmt.Errorf("lock publish cursor: %w", err)
		}
		rows, err := tx.Query(ctx, attributionSelect+"WHERE a.version > $1 ORDER BY a.version LIMIT $2", cursor, limit)
		if err != nil {
			return fmt.Errorf("pending attributions: %w", err)
		}
		rs, err := scanAttributionRows(rows)
		if err != nil {
			return fmt.Errorf("pending attributions: %w", err)
		}
		if len(rs) == 0 {
			return nil
		}
		if err := publish(ctx, rs); err != nil {
			return err
		}
		n = len(rs)
		_, err = tx.Exec(ctx, "UPDATE intel.publish_cursor SET version = $1 WHERE name = 'attributions'", rs[len(rs)-1].Version)
		return err
	})
	return n, err
}

// AttributionPage returns attributions after the key (chainType, address) in key order, for a
// full re-publication.
func (s *Store) AttributionPage(ctx context.Context, afterType, afterAddr string, limit int) ([]AttributionRow, error) {
	rows, err := s.pool.Query(ctx, attributionSelect+"WHERE (a.chain_type, a.address) > ($1, $2) ORDER BY a.chain_type, a.address LIMIT $3", afterType, afterAddr, limit)
	if err != nil {
		return nil, fmt.Errorf("attribution page: %w", err)
	}
	return scanAttributionRows(rows)
}

// Attribution returns one address's attribution as published.
func (s *Store) Attribution(ctx context.Context, chainType, addr string) (AttributionRow, error) {
	rows, err := s.pool.Query(ctx, attributionSelect+"WHERE a.chain_type = $1 AND a.address = $2", chainType, addr)
	if err != nil {
		return AttributionRow{}, err
	}
	rs, err := scanAttributionRows(rows)
	if err != nil {
		return AttributionRow{}, err
	}
	if len(rs) == 0 {
		return AttributionRow{}, ErrNotFound
	}
	return rs[0], nil
}

// PublishCursor returns the highest published version.
func (s *Store) PublishCursor(ctx context.Context) (int64, error) {
	var v int64
	err := s.pool.QueryRow(ctx, "SELECT version FROM intel.publish_cursor WHERE name = 'attributions'").Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return v, err
}
