package store

// Natural ids (migration 5). A transfer is counted once by (chain, id), whatever block carries
// it: the block journal only knows a block's own transfers, so the same transfer published in
// another block (ingest replaying its hashes, or a reorg's new block arriving before the reorg)
// would be counted twice. Counting claims the transfer's id in intel.transfer_ids, in the same
// transaction; a transfer whose id another block's transfer holds is displaced
// (intel.displaced_facts) and counted only when a reorg orphans that block and frees the id.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// transferNID is the hash a transfer's natural id is claimed by: md5 of
// "<octets of chain>:<chain>|<id>", as migration 5 computes it.
func transferNID(chain, id string) pgtype.UUID {
	return pgtype.UUID{Bytes: md5.Sum([]byte(strconv.Itoa(len(chain)) + ":" + chain + "|" + id)), Valid: true}
}

// claim claims the natural ids of facts in tx and reports, per fact, whether it won: its id was
// free and no earlier fact of facts took it.
func claim(ctx context.Context, tx pgx.Tx, facts []TransferFact) ([]bool, error) {
	won := make([]bool, len(facts))
	if len(facts) == 0 {
		return won, nil
	}
	nids := make([]pgtype.UUID, len(facts))
	for i, f := range facts {
		nids[i] = transferNID(f.Chain, f.ID)
	}
	// In key order, as every multi-row write of a batch (sortedKeys): PostgreSQL orders uuids
	// by their bytes.
	sorted := slices.Clone(nids)
	slices.SortFunc(sorted, func(a, b pgtype.UUID) int { return bytes.Compare(a.Bytes[:], b.Bytes[:]) })
	rows, err := tx.Query(ctx, `INSERT INTO intel.transfer_ids (nid) SELECT unnest($1::uuid[]) ON CONFLICT DO NOTHING RETURNING nid`, sorted)
	if err != nil {
		return nil, fmt.Errorf("claim transfer ids: %w", err)
	}
	free, err := pgx.CollectRows(rows, pgx.RowTo[pgtype.UUID])
	if err != nil {
		return nil, fmt.Errorf("claim transfer ids: %w", err)
	}
	left := make(map[[16]byte]bool, len(free))
	for _, n := range free {
		left[n.Bytes] = true
	}
	for i, n := range nids {
		if left[n.Bytes] {
			won[i], left[n.Bytes] = true, false
		}
	}
	return won, nil
}

// freeIDs releases the natural ids of chain's transfers ids (of blocks a reorg orphaned).
func freeIDs(ctx context.Context, tx pgx.Tx, chain string, ids []string) error {
	nids := make([]pgtype.UUID, 0, len(ids))
	for _, id := range ids {
		if id != "" {
			nids = append(nids, transferNID(chain, id))
		}
	}
	if len(nids) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `DELETE FROM intel.transfer_ids WHERE nid = ANY($1)`, nids); err != nil {
		return fmt.Errorf("free transfer ids: %w", err)
	}
	return nil
}

// saveDisplaced keeps facts whose id another block's transfer holds.
func saveDisplaced(ctx context.Context, tx pgx.Tx, facts []TransferFact) error {
	if len(facts) == 0 {
		return nil
	}
	var ch, id, bh, ct, fr, to []string
	var ms []int64
	var usd []float64
	facts = slices.Clone(facts)
	slices.SortFunc(facts, func(a, b TransferFact) int { // key order (sortedKeys)
		return cmp.Or(strings.Compare(a.Chain, b.Chain), strings.Compare(a.ID, b.ID), strings.Compare(a.BlockHash, b.BlockHash))
	})
	for _, f := range facts {
		ch, id, bh, ct, fr, to = append(ch, f.Chain), append(id, f.ID), append(bh, f.BlockHash), append(ct, f.ChainType), append(fr, f.From), append(to, f.To)
		ms, usd = append(ms, f.TimeMs), append(usd, f.USD)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO intel.displaced_facts (chain, id, block_hash, chain_type, ms, from_addr, to_addr, usd)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::float8[])
		ON CONFLICT DO NOTHING`, ch, id, bh, ct, ms, fr, to, usd); err != nil {
		return fmt.Errorf("set displaced transfers aside: %w", err)
	}
	return nil
}

// promoteDisplaced counts, in tx (which holds reorgLock exclusively), the displaced transfers
// of chain whose ids a reorg freed and whose block is not orphaned: one per id (the newest),
// claimed, applied and journaled as a batch would; the others stay displaced.
func promoteDisplaced(ctx context.Context, tx pgx.Tx, chain string, freed []string) error {
	if len(freed) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `DELETE FROM intel.displaced_facts d WHERE d.chain = $1 AND d.id = ANY($2)
		AND NOT EXISTS (SELECT 1 FROM intel.orphaned_blocks o WHERE o.chain = d.chain AND o.hash = d.block_hash)
		RETURNING chain, id, block_hash, chain_type, ms, from_addr, to_addr, usd`, chain, freed)
	if err != nil {
		return fmt.Errorf("displaced transfers of freed ids: %w", err)
	}
	facts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TransferFact, error) {
		var f TransferFact
		err := r.Scan(&f.Chain, &f.ID, &f.BlockHash, &f.ChainType, &f.TimeMs, &f.From, &f.To, &f.USD)
		return f, err
	})
	if err != nil {
		return fmt.Errorf("displaced transfers of freed ids: %w", err)
	}
	slices.SortFunc(facts, func(a, b TransferFact) int {
		return cmp.Or(strings.Compare(a.ID, b.ID), cmp.Compare(b.TimeMs, a.TimeMs), strings.Compare(a.BlockHash, b.BlockHash))
	})
	won, err := claim(ctx, tx, facts)
	if err != nil {
		return err
	}
	var journal blockFacts
	var still []TransferFact
	sums := newTally()
	for i, f := range facts {
		if !won[i] {
			still = append(still, f)
			continue
		}
		journal.add(f, false)
		sums.add(f.Chain, f.ChainType, f.From, f.To, f.USD, f.TimeMs)
	}
	if err := sums.save(ctx, tx); err != nil {
		return err
	}
	if err := journal.save(ctx, tx); err != nil {
		return err
	}
	return saveDisplaced(ctx, tx, still)
}
