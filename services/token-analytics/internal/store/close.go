package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/jackc/pgx/v5"
)

// headSkew is how far past the store's clock a transfer's hour may move its chain's newest
// delivered hour (flow_marks.head): a transfer claiming a later time is stored and counted but
// cannot close the hours before it early.
const headSkew = time.Hour

// flowMark is a chain's row of market.flow_marks: the first hour not in flow_address_hours yet,
// the newest delivered hour and the end of the hours a close has announced (closing_until; the
// hours from rolledUntil up to it are being closed, or were announced by a close that failed).
type flowMark struct{ rolledUntil, head, closingUntil time.Time }

// flowMarks are the chains' marks.
type flowMarks map[string]flowMark

// closed is whether hour of chain is closed: in flow_address_hours rather than read from
// market.flows. A chain without a mark has no closed hour.
func (m flowMarks) closed(chain string, hour time.Time) bool {
	k, ok := m[chain]
	return ok && hour.Before(k.rolledUntil)
}

// closing is whether the hour of a copy of chain is in the hours a close has announced and not
// built yet: a writer storing it holds off or waits for the chain's close (sqlFlowsCloseTry).
func (m flowMarks) closing(chain string, hour time.Time) bool {
	k, ok := m[chain]
	return ok && !hour.Before(k.rolledUntil) && hour.Before(k.closingUntil)
}

// closeGrace is how long after the clock has left a chain's newest delivered hour that hour is
// closed although no later one was delivered: blocks of the hour delivered a little late still
// find it open, and a chain that stops delivering does not keep it (and the hours up to the
// clock's) open.
const closeGrace = 15 * time.Minute

// closeChunk is the most hours holding transfers one close transaction builds, so a chain's
// backlog closes in transactions of bounded size.
const closeChunk = 3 * time.Hour

// due are the hour ranges [from, to) closeHours closes at now, per chain: the hours not closed
// yet before both the newest delivered one and the clock's, and up to the clock's hour once
// closeGrace has passed since the clock left the newest delivered one (all: every delivered
// hour).
func (m flowMarks) due(now time.Time, all bool) map[string][2]time.Time {
	out := map[string][2]time.Time{}
	clock := now.Truncate(time.Hour)
	for chain, k := range m {
		target := k.head
		switch {
		case all:
			target = k.head.Add(time.Hour)
		case !now.Before(k.head.Add(time.Hour + closeGrace)):
			target = clock
		case clock.Before(target):
			target = clock
		}
		if target.After(k.rolledUntil) {
			out[chain] = [2]time.Time{k.rolledUntil, target}
		}
	}
	return out
}

func readMarks(ctx context.Context, tx querier) (flowMarks, error) {
	rows, err := tx.Query(ctx, sqlFlowMarks)
	if err != nil {
		return nil, err
	}
	marks := flowMarks{}
	var chain string
	var m flowMark
	_, err = pgx.ForEachRow(rows, []any{&chain, &m.rolledUntil, &m.head, &m.closingUntil}, func() error {
		marks[chain] = m
		return nil
	})
	return marks, err
}

// ClosedUntil is every chain's end of the closed hours (flow_marks.rolled_until): the hours
// before it are in flow_address_hours. A chain none of whose hours was closed yet is left out.
func (s *Store) ClosedUntil(ctx context.Context) (map[string]time.Time, error) {
	marks, err := readMarks(ctx, s.pool)
	if err != nil {
		return nil, err
	}
	out := make(map[string]time.Time, len(marks))
	for chain, m := range marks {
		if m.rolledUntil.Year() > 1 {
			out[chain] = m.rolledUntil
		}
	}
	return out, nil
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

// CloseHours builds flow_address_hours from market.flows for every chain's hours before both its
// newest delivered hour and the clock's hour, and up to the clock's hour once the clock has left
// the newest delivered one by closeGrace (the hours no transfer is expected in any more; a late
// one updates the rows in place), so top_flow and class changes read per address only the hours
// still open. Each chain closes in its own transactions: one chain's failure leaves the others'
// closes done, and is returned with the others' errors.
func (s *Store) CloseHours(ctx context.Context) (Closed, error) {
	return s.closeHours(ctx, false)
}

// CloseAllHours is CloseHours including each chain's newest delivered hour.
func (s *Store) CloseAllHours(ctx context.Context) (Closed, error) {
	return s.closeHours(ctx, true)
}

func (s *Store) closeHours(ctx context.Context, all bool) (Closed, error) {
	var c Closed
	now := s.now().UTC()
	// Most runs find nothing to close: they do not take the lock, which waits for the writers.
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return c, err
	}
	marks, err := readMarks(ctx, tx)
	_ = tx.Rollback(ctx)
	if err != nil {
		return c, err
	}
	due := marks.due(now, all)
	chains := slices.Sorted(maps.Keys(due))
	var errs []error
	for _, chain := range chains {
		var closed int64
		for {
			n, done, err := s.closeChunk(ctx, chain, now, all)
			c.Rows, c.Transfers, closed = c.Rows+n.Rows, c.Transfers+n.Transfers, max(closed, n.Chains)
			if err != nil {
				errs = append(errs, fmt.Errorf("close flow hours of %s: %w", chain, err))
			}
			if err != nil || done {
				break
			}
		}
		c.Chains += closed
	}
	return c, errors.Join(errs...)
}

// closeChunk closes the due hours of chain from its rolled_until up to at most closeChunk past
// the first hour holding a copy, and reports whether none is left due. It runs beside the
// transfer writers, in two transactions:
//
//   - the announcement moves the chain's closing_until to the range's end under the writers'
//     exclusive lock, held only for that update: every writer that read the earlier
//     closing_until has committed, and every later one sees the new one;
//   - the build takes the chain's close lock and builds the hours from rolled_until to
//     closing_until as it reads them then. A writer with a copy in those hours takes the same
//     lock shared (ApplyFlows), so it either committed before the build read market.flows or
//     (rolled back, its chains' writer locks released) waits until the build moved
//     rolled_until, runs again and adds its copy to flow_address_hours itself. Writers of later
//     hours, the bulk of them, do not wait, not even behind such a writer.
//
// Two replicas closing one chain announce the same range and build it one after the other: the
// second finds nothing left between rolled_until and closing_until.
func (s *Store) closeChunk(ctx context.Context, chain string, now time.Time, all bool) (Closed, bool, error) {
	due, done, err := s.announceClose(ctx, chain, now, all)
	if err != nil || !due {
		return Closed{}, true, err
	}
	var c Closed
	err = s.write(ctx, "close flow hours", func(tx pgx.Tx) (bool, error) {
		c = Closed{}
		if _, err := tx.Exec(ctx, sqlCloseWorkMem); err != nil {
			return false, err
		}
		if _, err := tx.Exec(ctx, sqlFlowsCloseLock, chain); err != nil {
			return false, err
		}
		marks, err := readMarks(ctx, tx)
		if err != nil {
			return false, err
		}
		m, ok := marks[chain]
		if !ok || !m.rolledUntil.Before(m.closingUntil) {
			return false, nil
		}
		c, err = closeRange(ctx, tx, chain, [2]time.Time{m.rolledUntil, m.closingUntil})
		return false, err
	})
	if err != nil {
		// Rolled back (a failed statement or commit): nothing was built.
		return Closed{}, done, err
	}
	return c, done, nil
}

// announceClose moves chain's closing_until to the end of its due range (at most closeChunk
// past the first hour holding a copy), and reports whether a range is due and whether none is
// left due after it.
func (s *Store) announceClose(ctx context.Context, chain string, now time.Time, all bool) (due, done bool, err error) {
	err = s.write(ctx, "announce flow hour close", func(tx pgx.Tx) (bool, error) {
		due, done = false, true
		if _, err := tx.Exec(ctx, sqlLockExclusive); err != nil {
			return false, err
		}
		marks, err := readMarks(ctx, tx)
		if err != nil {
			return false, err
		}
		r, ok := marks.due(now, all)[chain]
		if !ok {
			return false, nil
		}
		var next *time.Time
		if err := tx.QueryRow(ctx, sqlFlowsCloseNext, chain, r[0], r[1]).Scan(&next); err != nil {
			return false, err
		}
		if next != nil && next.Add(closeChunk).Before(r[1]) {
			r[1], done = next.Add(closeChunk), false
		}
		due = true
		_, err = tx.Exec(ctx, sqlFlowMarksClosing, chain, r[1])
		return false, err
	})
	return due, done, err
}

// closeRange builds the rows of the hours r of chain by a plain insert, and when a row of them
// exists already (written from rolled_until on by a replica of the previous model) rebuilds
// them instead, setting such rows to the rebuilt sums.
func closeRange(ctx context.Context, tx pgx.Tx, chain string, r [2]time.Time) (Closed, error) {
	var c Closed
	sp, err := tx.Begin(ctx)
	if err != nil {
		return c, err
	}
	err = sp.QueryRow(ctx, sqlFlowsClose, chain, r[0], r[1]).Scan(&c.Rows, &c.Transfers, &c.Chains)
	if err == nil {
		return c, sp.Commit(ctx)
	}
	if rerr := sp.Rollback(ctx); !pgstore.IsUniqueViolation(err) || rerr != nil {
		return c, errors.Join(err, rerr)
	}
	err = tx.QueryRow(ctx, sqlFlowsRebuild, chain, r[0], r[1]).Scan(&c.Rows, &c.Transfers, &c.Chains)
	return c, err
}
