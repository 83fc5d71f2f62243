package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// headSkew is how far past the store's clock a transfer's hour may move its chain's newest
// delivered hour (flow_marks.head): a transfer claiming a later time is stored and counted but
// cannot close the hours before it early.
const headSkew = time.Hour

// flowMarks are the chains' rows of market.flow_marks: per chain, the first hour not in
// flow_address_hours yet and the newest delivered hour.
type flowMarks map[string]struct{ rolledUntil, head time.Time }

// closed is whether hour of chain is closed: in flow_address_hours rather than read from
// market.flows. A chain without a mark has no closed hour.
func (m flowMarks) closed(chain string, hour time.Time) bool {
	k, ok := m[chain]
	return ok && hour.Before(k.rolledUntil)
}

// due are the hour ranges [from, to) closeHours closes at clock, per chain: the hours before
// both the newest delivered one and clock (all: every delivered hour) not closed yet.
func (m flowMarks) due(clock time.Time, all bool) map[string][2]time.Time {
	out := map[string][2]time.Time{}
	for chain, k := range m {
		target := k.head
		switch {
		case all:
			target = k.head.Add(time.Hour)
		case clock.Before(target):
			target = clock
		}
		if target.After(k.rolledUntil) {
			out[chain] = [2]time.Time{k.rolledUntil, target}
		}
	}
	return out
}

func readMarks(ctx context.Context, tx pgx.Tx) (flowMarks, error) {
	rows, err := tx.Query(ctx, sqlFlowMarks)
	if err != nil {
		return nil, err
	}
	marks := flowMarks{}
	var chain string
	var until, head time.Time
	_, err = pgx.ForEachRow(rows, []any{&chain, &until, &head}, func() error {
		marks[chain] = struct{ rolledUntil, head time.Time }{until, head}
		return nil
	})
	return marks, err
}

// moveHeads records the newest hour of each chain's batch (at most the clock's hour plus
// headSkew) in market.flow_marks when it is later than the stored one, or the chain is new.
func (s *Store) moveHeads(ctx context.Context, tx pgx.Tx, marks flowMarks, newest map[string]time.Time) error {
	latest := s.now().UTC().Add(headSkew).Truncate(time.Hour)
	var chains []string
	var hours []time.Time
	for c, h := range newest {
		if h.After(latest) {
			h = latest
		}
		if m, ok := marks[c]; !ok || h.After(m.head) {
			chains, hours = append(chains, c), append(hours, h)
		}
	}
	if len(chains) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, sqlFlowMarksHead, chains, hours)
	return err
}

// Closed is what one hour close did: the flow_address_hours rows it inserted, the counted
// transfers they sum and the chains whose hours it closed.
type Closed struct {
	Rows, Transfers, Chains int64
}

// CloseHours builds flow_address_hours for every chain's hours before both its newest delivered
// hour and the clock's hour (the hours no transfer is expected in any more; a late one updates
// the rows in place) from market.flows, so top_flow and class changes read per address only the
// hours still open.
func (s *Store) CloseHours(ctx context.Context) (Closed, error) {
	return s.closeHours(ctx, false)
}

// CloseAllHours is CloseHours including each chain's newest delivered hour.
func (s *Store) CloseAllHours(ctx context.Context) (Closed, error) {
	return s.closeHours(ctx, true)
}

// closeHours holds the writers' lock alone: a transfer batch decides per hour whether to add
// its per-address sums to flow_address_hours by the marks it read, so none may commit between
// the close's read of market.flows and its move of the mark. Each due chain's range is closed by
// one statement with the range as constants, so it reads only that range of market.flows.
func (s *Store) closeHours(ctx context.Context, all bool) (Closed, error) {
	var c Closed
	clock := s.now().UTC().Truncate(time.Hour)
	// Most runs find nothing to close: they do not take the lock, which waits for the writers.
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return c, err
	}
	marks, err := readMarks(ctx, tx)
	_ = tx.Rollback(ctx)
	if err != nil || len(marks.due(clock, all)) == 0 {
		return c, err
	}
	err = s.write(ctx, "close flow hours", func(tx pgx.Tx) (bool, error) {
		c = Closed{}
		for _, q := range []string{sqlLockExclusive, sqlCloseWorkMem} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return false, err
			}
		}
		marks, err := readMarks(ctx, tx)
		if err != nil {
			return false, err
		}
		for chain, r := range marks.due(clock, all) {
			var rows, transfers, chains int64
			if err := tx.QueryRow(ctx, sqlFlowsClose, chain, r[0], r[1]).Scan(&rows, &transfers, &chains); err != nil {
				return false, err
			}
			c = Closed{c.Rows + rows, c.Transfers + transfers, c.Chains + chains}
		}
		return false, nil
	})
	return c, err
}
