package write

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/chainintel/chainintel/services/transfers/internal/store/attribution"
	"github.com/jackc/pgx/v5"
)

// ApplyAttributions applies a batch of attribution changes in order: an upsert keeps only a
// version newer than the stored one; a deletion (tombstone) removes the address. When the
// batch moves addresses between attribution groups, the live groups' rollups are re-aggregated
// in the same transaction (see relabel), so entity figures stay exact.
func (s *Writer) ApplyAttributions(ctx context.Context, upserts []attribution.Attribution, deletes []attribution.AddressKey) error {
	if len(upserts)+len(deletes) == 0 {
		return nil
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, prepareAttributionsSQL); err != nil {
			return fmt.Errorf("prepare attributions: %w", err)
		}
		cts, addrs := make([]string, len(deletes)), make([]string, len(deletes))
		for i, d := range deletes {
			cts[i], addrs[i] = d.ChainType, d.Address
		}
		cols := []string{"chain_type", "address", "entity_id", "entity_type", "entity", "label", "predicted_id", "predicted",
			"deposit_service_id", "is_contract", "version", "updated_at"}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"stage_attributions"}, cols, pgx.CopyFromSlice(len(upserts), func(i int) ([]any, error) {
			a := upserts[i]
			var eid, etype, pid string
			var ej, pj []byte
			if a.Entity != nil {
				eid, etype = a.Entity.ID, a.Entity.Type
				ej, _ = json.Marshal(a.Entity)
			}
			if a.Predicted != nil {
				pid = a.Predicted.ID
				pj, _ = json.Marshal(a.Predicted)
			}
			return []any{a.ChainType, a.Address, eid, etype, jsonOrNil(ej), a.Label, pid, jsonOrNil(pj), a.DepositServiceID,
				a.IsContract, a.Version, a.UpdatedAt}, nil
		})); err != nil {
			return fmt.Errorf("copy attributions: %w", err)
		}
		// The groups of every address the batch names, before and after it.
		if _, err := tx.Exec(ctx, relabelAddrsSQL, addrs); err != nil {
			return fmt.Errorf("addresses of the batch: %w", err)
		}
		if _, err := tx.Exec(ctx, membBeforeSQL); err != nil {
			return fmt.Errorf("groups before: %w", err)
		}
		if err := analyze(ctx, tx, "relabel_addrs", "memb_before"); err != nil {
			return err
		}
		if len(deletes) > 0 {
			if _, err := tx.Exec(ctx, deleteAttributionsSQL, cts, addrs); err != nil {
				return fmt.Errorf("delete attributions: %w", err)
			}
		}
		if len(upserts) > 0 {
			if _, err := tx.Exec(ctx, upsertAttributionsSQL); err != nil {
				return fmt.Errorf("upsert attributions: %w", err)
			}
		}
		if err := attribution.PruneChanges(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, membAfterSQL); err != nil {
			return fmt.Errorf("groups after: %w", err)
		}
		if err := analyze(ctx, tx, "memb_after"); err != nil {
			return err
		}
		return s.relabel(ctx, tx)
	})
}

func jsonOrNil(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}
