package write

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// relabel runs after a batch of attribution changes, in its transaction, with memb_before and
// memb_after holding the groups of the batch's addresses before and after it. For the addresses
// whose groups changed it subtracts their pair_hourly rows' contributions under the old
// membership from the live groups' rollups and adds them under the new one; groups that grew
// past the threshold are built from pair_hourly, groups left without addresses are dropped.
// Every transfer writer holds the shared group lock, so pair_hourly holds exactly the rows the
// rollups were built from.
func (s *Writer) relabel(ctx context.Context, tx pgx.Tx) error {
	if err := createSubtractionTables(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, createRelabelChangedSQL); err != nil {
		return fmt.Errorf("relabel tables: %w", err)
	}
	var changed int
	if err := tx.QueryRow(ctx, relabelGroupChangesSQL).Scan(&changed); err != nil {
		return fmt.Errorf("group changes: %w", err)
	}
	if changed == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, bumpGroupEpochSQL); err != nil {
		return err
	}
	var live []string
	if err := tx.QueryRow(ctx, liveGroupsSQL).Scan(&live); err != nil {
		return fmt.Errorf("live groups: %w", err)
	}
	tag, err := tx.Exec(ctx, relabelPairsSQL)
	if err != nil {
		return fmt.Errorf("pairs of relabelled addresses: %w", err)
	}
	moved := tag.RowsAffected() > 0
	if err := analyze(ctx, tx, "sub_pairs"); err != nil {
		return err
	}
	if moved && len(live) > 0 {
		// The old membership: the batch's addresses as they were, the others as they are.
		if _, err := tx.Exec(ctx, relabelOldMembershipSQL, live); err != nil {
			return fmt.Errorf("old membership: %w", err)
		}
		if err := analyze(ctx, tx, "sub_memb"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, groupRollupsSQL, signSubtract); err != nil {
			return fmt.Errorf("subtract old membership: %w", err)
		}
		if _, err := tx.Exec(ctx, dropEmptiedGroupRollupsSQL); err != nil {
			return fmt.Errorf("drop emptied group rollups: %w", err)
		}
	}
	fresh, err := s.transitions(ctx, tx)
	if err != nil {
		return err
	}
	if moved {
		if _, err := tx.Exec(ctx, clearSubMembSQL); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, relabelNewMembershipSQL, fresh); err != nil {
			return fmt.Errorf("new membership: %w", err)
		}
		if err := analyze(ctx, tx, "sub_memb"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, groupRollupsSQL, signAdd); err != nil {
			return fmt.Errorf("add new membership: %w", err)
		}
	}
	return materialize(ctx, tx, fresh)
}

// transitions drops the live groups left without addresses and marks live the groups that
// grew past the threshold; it returns the latter, still to be built.
func (s *Writer) transitions(ctx context.Context, tx pgx.Tx) ([]string, error) {
	var dead, fresh []string
	if err := tx.QueryRow(ctx, retireEmptiedGroupsSQL).Scan(&dead); err != nil {
		return nil, fmt.Errorf("emptied groups: %w", err)
	}
	if len(dead) > 0 {
		for _, q := range dropGroupRows {
			if _, err := tx.Exec(ctx, q, dead); err != nil {
				return nil, fmt.Errorf("drop emptied groups: %w", err)
			}
		}
	}
	if _, err := tx.Exec(ctx, deleteEmptyGroupsSQL); err != nil {
		return nil, err
	}
	if err := tx.QueryRow(ctx, promoteGrownGroupsSQL, s.opt.GroupMin).Scan(&fresh); err != nil {
		return nil, fmt.Errorf("grown groups: %w", err)
	}
	return fresh, nil
}

// materialize builds the rollups of groups that just became live from pair_hourly: every pair
// row with an address of theirs on either side, with the groups the read model gives now (pairs
// with groups that were already live included, counted once).
func materialize(ctx context.Context, tx pgx.Tx, groups []string) error {
	if len(groups) == 0 {
		return nil
	}
	if err := createSubtractionTables(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, clearSubtractionTablesSQL); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, newGroupPairsSQL, groups); err != nil {
		return fmt.Errorf("pairs of new groups: %w", err)
	}
	if err := analyze(ctx, tx, "sub_pairs"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, subMembLiveGroupsSQL); err != nil {
		return fmt.Errorf("membership for new groups: %w", err)
	}
	if err := analyze(ctx, tx, "sub_memb"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, buildNewGroupsSQL, groups); err != nil {
		return fmt.Errorf("build new groups: %w", err)
	}
	// A type group that turned live is now the type of its members on the other entity groups'
	// pair rows (entity_pair_rows.from_t and to_t), which were written while it was not live.
	if !slices.ContainsFunc(groups, func(g string) bool { return strings.HasPrefix(g, "t:") }) {
		return nil
	}
	if _, err := tx.Exec(ctx, retypePairRowsSQL, groups); err != nil {
		return fmt.Errorf("types of new type groups on pair rows: %w", err)
	}
	return nil
}

// Reconcile makes the live groups follow the threshold for groups that grew past it (after a
// migration, or a lower threshold): it builds them. It changes nothing when everything is in
// order, so it is cheap to run at every migration.
func (s *Writer) Reconcile(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockExclusiveSQL); err != nil {
			return err
		}
		fresh, err := s.transitions(ctx, tx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, bumpGroupEpochSQL); err != nil {
			return err
		}
		return materialize(ctx, tx, fresh)
	})
}

// Rematerialize rebuilds every group rollup from pair_hourly and the read model: group sizes
// are recounted and exactly the groups above the threshold are live. It is how a changed
// threshold applies to groups already live, and a repair tool.
func (s *Writer) Rematerialize(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, rematerializeGroupsSQL); err != nil {
			return fmt.Errorf("recount groups: %w", err)
		}
		fresh, err := s.transitions(ctx, tx)
		if err != nil {
			return err
		}
		return materialize(ctx, tx, fresh)
	})
}

// analyze gives the planner the sizes of temporary tables just filled (they have no statistics
// otherwise, and a join planned for a handful of rows can take quadratic time on many). Its
// statement is built here: ANALYZE of a table named by its caller, an identifier no parameter
// can stand for.
func analyze(ctx context.Context, tx pgx.Tx, tables ...string) error {
	for _, t := range tables {
		if _, err := tx.Exec(ctx, "ANALYZE "+t); err != nil {
			return fmt.Errorf("analyze %s: %w", t, err)
		}
	}
	return nil
}
