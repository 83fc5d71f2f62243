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
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE IF NOT EXISTS relabel_changed (address text COLLATE "C" PRIMARY KEY) ON COMMIT DELETE ROWS`); err != nil {
		return fmt.Errorf("relabel tables: %w", err)
	}
	var changed int
	if err := tx.QueryRow(ctx, `WITH rem AS (SELECT address, grp FROM memb_before EXCEPT SELECT address, grp FROM memb_after),
  ad AS (SELECT address, grp FROM memb_after EXCEPT SELECT address, grp FROM memb_before),
  ch AS (INSERT INTO relabel_changed SELECT address FROM rem UNION SELECT address FROM ad),
  sz AS (INSERT INTO transfers.groups AS g (grp, size)
         SELECT grp, sum(d) FROM (SELECT grp, -1 AS d FROM rem UNION ALL SELECT grp, 1 FROM ad) x GROUP BY grp ORDER BY grp
         ON CONFLICT (grp) DO UPDATE SET size = g.size + excluded.size)
SELECT (SELECT count(*) FROM rem) + (SELECT count(*) FROM ad)`).Scan(&changed); err != nil {
		return fmt.Errorf("group changes: %w", err)
	}
	if changed == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, bumpEpochSQL); err != nil {
		return err
	}
	var live []string
	if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(grp), '{}') FROM transfers.groups WHERE live`).Scan(&live); err != nil {
		return fmt.Errorf("live groups: %w", err)
	}
	tag, err := tx.Exec(ctx, `INSERT INTO sub_pairs
		SELECT p.* FROM transfers.pair_hourly p WHERE p.from_addr IN (SELECT address FROM relabel_changed)
		UNION SELECT p.* FROM transfers.pair_hourly p WHERE p.to_addr IN (SELECT address FROM relabel_changed)`)
	if err != nil {
		return fmt.Errorf("pairs of relabelled addresses: %w", err)
	}
	moved := tag.RowsAffected() > 0
	if err := analyze(ctx, tx, "sub_pairs"); err != nil {
		return err
	}
	const subAddrs = "SELECT from_addr FROM sub_pairs UNION SELECT to_addr FROM sub_pairs"
	if moved && len(live) > 0 {
		// The old membership: the batch's addresses as they were, the others as they are.
		if _, err := tx.Exec(ctx, `INSERT INTO sub_memb
			SELECT address, grp FROM memb_before WHERE grp = ANY($1::text[]) AND address IN (`+subAddrs+`)
			UNION
			SELECT address, grp FROM (`+membershipSQL("SELECT a FROM ("+subAddrs+") s(a) WHERE a NOT IN (SELECT address FROM relabel_addrs)", false)+`) m
			WHERE grp = ANY($1::text[])`, live); err != nil {
			return fmt.Errorf("old membership: %w", err)
		}
		if err := analyze(ctx, tx, "sub_memb"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, groupRollupsOf("sub_pairs", "sub_memb", -1, "", "")); err != nil {
			return fmt.Errorf("subtract old membership: %w", err)
		}
		if _, err := tx.Exec(ctx, groupRollupCleanup("sub_pairs", "sub_memb")); err != nil {
			return fmt.Errorf("drop emptied group rollups: %w", err)
		}
	}
	fresh, err := s.transitions(ctx, tx)
	if err != nil {
		return err
	}
	if moved {
		if _, err := tx.Exec(ctx, `DELETE FROM sub_memb`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO sub_memb SELECT address, grp FROM (`+membershipSQL(subAddrs, true)+`) m WHERE grp <> ALL($1::text[])`, fresh); err != nil {
			return fmt.Errorf("new membership: %w", err)
		}
		if err := analyze(ctx, tx, "sub_memb"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, groupRollupsOf("sub_pairs", "sub_memb", 1, "", "")); err != nil {
			return fmt.Errorf("add new membership: %w", err)
		}
	}
	return materialize(ctx, tx, fresh)
}

// transitions drops the live groups left without addresses and marks live the groups that
// grew past the threshold; it returns the latter, still to be built.
func (s *Writer) transitions(ctx context.Context, tx pgx.Tx) ([]string, error) {
	var dead, fresh []string
	if err := tx.QueryRow(ctx, `WITH d AS (UPDATE transfers.groups SET live = false WHERE live AND size <= 0 RETURNING grp)
		SELECT coalesce(array_agg(grp), '{}') FROM d`).Scan(&dead); err != nil {
		return nil, fmt.Errorf("emptied groups: %w", err)
	}
	if len(dead) > 0 {
		for _, q := range dropGroupRowsSQL() {
			if _, err := tx.Exec(ctx, q, dead); err != nil {
				return nil, fmt.Errorf("drop emptied groups: %w", err)
			}
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM transfers.groups WHERE size <= 0 AND NOT live`); err != nil {
		return nil, err
	}
	if err := tx.QueryRow(ctx, `WITH f AS (UPDATE transfers.groups SET live = true WHERE NOT live AND size > $1 RETURNING grp)
		SELECT coalesce(array_agg(grp), '{}') FROM f`, s.opt.GroupMin).Scan(&fresh); err != nil {
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
	const members = `SELECT address FROM transfers.attributions
		WHERE transfers.attribution_groups(entity_id, entity_type, deposit_service_id) && $1::text[]`
	if _, err := tx.Exec(ctx, `DELETE FROM sub_pairs; DELETE FROM sub_memb`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO sub_pairs
		SELECT p.* FROM transfers.pair_hourly p WHERE p.from_addr IN (`+members+`)
		UNION SELECT p.* FROM transfers.pair_hourly p WHERE p.to_addr IN (`+members+`)`, groups); err != nil {
		return fmt.Errorf("pairs of new groups: %w", err)
	}
	if err := analyze(ctx, tx, "sub_pairs"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO sub_memb `+membershipSQL("SELECT from_addr FROM sub_pairs UNION SELECT to_addr FROM sub_pairs", true)); err != nil {
		return fmt.Errorf("membership for new groups: %w", err)
	}
	if err := analyze(ctx, tx, "sub_memb"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, groupRollupsOf("sub_pairs", "sub_memb", 1, "grp = ANY($1::text[])", "(fg = ANY($1::text[]) OR tg = ANY($1::text[]))"),
		groups); err != nil {
		return fmt.Errorf("build new groups: %w", err)
	}
	// A type group that turned live is now the type of its members on the other entity groups'
	// pair rows (grp_edges.from_t and to_t), which were written while it was not live.
	if !slices.ContainsFunc(groups, func(g string) bool { return strings.HasPrefix(g, "t:") }) {
		return nil
	}
	if _, err := tx.Exec(ctx, `WITH gsrc AS (`+withGroups("sub_pairs", "sub_memb")+`),
  gsides AS (`+groupSides("gsrc", "grp LIKE 'e:%' AND grp <> ALL($1::text[])", false)+`),
  k AS (SELECT grp, bucket, from_addr, to_addr, chain, token, transfers.type_group(fg) AS ft, transfers.type_group(tg) AS tt FROM gsides)
UPDATE transfers.grp_edges r SET from_t = k.ft, to_t = k.tt FROM k
WHERE r.grp = k.grp AND r.bucket = k.bucket AND r.from_addr = k.from_addr AND r.to_addr = k.to_addr AND r.chain = k.chain
  AND r.token = k.token AND (r.from_t <> k.ft OR r.to_t <> k.tt)`, groups); err != nil {
		return fmt.Errorf("types of new type groups on pair rows: %w", err)
	}
	return nil
}

// Reconcile makes the live groups follow the threshold for groups that grew past it (after a
// migration, or a lower threshold): it builds them. It changes nothing when everything is in
// order, so it is cheap to run at every migration.
func (s *Writer) Reconcile(ctx context.Context) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '64MB'; SET LOCAL jit = off; SELECT pg_advisory_xact_lock(`+fmt.Sprint(groupLock)+`)`); err != nil {
			return err
		}
		fresh, err := s.transitions(ctx, tx)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, bumpEpochSQL); err != nil {
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
		if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '64MB'; SET LOCAL jit = off; SELECT pg_advisory_xact_lock(`+fmt.Sprint(groupLock)+`);
			TRUNCATE transfers.grp_hourly, transfers.grp_daily, transfers.grp_pair_hourly, transfers.grp_pair_daily,
			  transfers.grp_edges, transfers.grp_cp, transfers.groups;
			INSERT INTO transfers.groups (grp, size)
			SELECT g, count(DISTINCT address) FROM transfers.attributions,
			  unnest(transfers.attribution_groups(entity_id, entity_type, deposit_service_id)) g
			GROUP BY g;
			`+bumpEpochSQL); err != nil {
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
// otherwise, and a join planned for a handful of rows can take quadratic time on many).
func analyze(ctx context.Context, tx pgx.Tx, tables ...string) error {
	for _, t := range tables {
		if _, err := tx.Exec(ctx, "ANALYZE "+t); err != nil {
			return fmt.Errorf("analyze %s: %w", t, err)
		}
	}
	return nil
}
