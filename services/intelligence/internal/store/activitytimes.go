package store

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// An address's first and last time are the min and max over its counted transfers, which are
// either in the block journal (block_facts, not orphaned) or settled (intel.settled_activity:
// aged out of the journal, or never journaled). A reorg taking back the transfer an extreme came
// from recomputes it from the settled extremes and the address's surviving journal transfers
// (retime), which is exact: a reorg takes back journal transfers only.

var (
	//go:embed sql/settled_activity_add.sql
	settledActivityAddSQL string
	//go:embed sql/activity_times_stale.sql
	activityTimesStaleSQL string
	//go:embed sql/journal_chains.sql
	journalChainsSQL string
	//go:embed sql/journal_times.sql
	journalTimesSQL string
	//go:embed sql/activity_times_set.sql
	activityTimesSetSQL string
)

// firstJournalWindow is the chain time the first journal read of a reorg's recomputation spans,
// behind the newest block; each further read spans twice the one before. An address's last
// surviving transfer is usually in the newest blocks, so few reads find it; an address whose
// journal transfers are older costs a read per doubling: eight reach back a day, nine the two
// days.
const firstJournalWindow = 10 * time.Minute

// saveSettled adds transfers no journal holds to intel.settled_activity, in key order.
func saveSettled(ctx context.Context, tx pgx.Tx, acts map[actKey]*act) error {
	if len(acts) == 0 {
		return nil
	}
	var ct, addr []string
	var n, first, last []int64
	for _, k := range sortedKeys(acts, compareActKey) {
		a := acts[k]
		ct, addr, n, first, last = append(ct, k.ct), append(addr, k.addr), append(n, a.n), append(first, a.first), append(last, a.last)
	}
	if _, err := tx.Exec(ctx, settledActivityAddSQL, ct, addr, n, first, last); err != nil {
		return fmt.Errorf("record settled activity: %w", err)
	}
	return nil
}

// staleTimes is an address whose first or last time a reorg may have taken back.
type staleTimes struct {
	ct, addr                  string
	first, last               int64 // stored
	needFirst, needLast       bool  // the stored time may be a taken-back transfer's
	journal                   int64 // surviving journal transfers
	settled                   int64
	settledFirst, settledLast int64 // meaningful when settled > 0
	found                     bool  // a surviving journal transfer was read
	jFirst, jLast             int64
}

// retime recomputes the first and last times of the addresses of y (the transfers a reorg took
// back, after their counts were subtracted and emptied rows dropped) whose stored time may be a
// taken-back transfer's.
func (y *tally) retime(ctx context.Context, tx pgx.Tx) error {
	if len(y.acts) == 0 {
		return nil
	}
	var ct, addr []string
	var first, last []int64
	for _, k := range sortedKeys(y.acts, compareActKey) {
		a := y.acts[k]
		ct, addr, first, last = append(ct, k.ct), append(addr, k.addr), append(first, a.first), append(last, a.last)
	}
	rows, err := tx.Query(ctx, activityTimesStaleSQL, ct, addr, first, last)
	if err != nil {
		return fmt.Errorf("activity times a reorg took back: %w", err)
	}
	stale, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*staleTimes, error) {
		var s staleTimes
		err := r.Scan(&s.ct, &s.addr, &s.first, &s.last, &s.needFirst, &s.needLast, &s.journal, &s.settled, &s.settledFirst, &s.settledLast)
		return &s, err
	})
	if err != nil {
		return fmt.Errorf("activity times a reorg took back: %w", err)
	}
	slices.SortFunc(stale, func(a, b *staleTimes) int { return compareActKey(actKey{a.ct, a.addr}, actKey{b.ct, b.addr}) })
	inJournal := map[string][]*staleTimes{}
	for _, s := range stale {
		if s.journal > 0 {
			inJournal[s.ct] = append(inJournal[s.ct], s)
		}
	}
	for _, chainType := range sortedKeys(inJournal, strings.Compare) {
		if err := readJournalTimes(ctx, tx, chainType, inJournal[chainType]); err != nil {
			return err
		}
	}
	return setTimes(ctx, tx, stale)
}

// readJournalTimes reads the surviving journal transfers of pending (addresses of chainType that
// have some) from the newest blocks of the chain type's chains back, a window of blocks at a
// time, until each address's needed times are known: its last once a transfer of it at or after
// the window's start was read (older blocks hold older transfers only), its first once the window
// starts at or before its stored first time (every counted transfer of it is at or after that),
// or the journal's end.
func readJournalTimes(ctx context.Context, tx pgx.Tx, chainType string, pending []*staleTimes) error {
	rows, err := tx.Query(ctx, journalChainsSQL, chainType)
	if err != nil {
		return fmt.Errorf("journal chains of %s: %w", chainType, err)
	}
	var chains []string
	oldest, newest := int64(math.MaxInt64), int64(math.MinInt64)
	for rows.Next() {
		var c string
		var lo, hi int64
		if err := rows.Scan(&c, &lo, &hi); err != nil {
			rows.Close()
			return fmt.Errorf("journal chains of %s: %w", chainType, err)
		}
		chains, oldest, newest = append(chains, c), min(oldest, lo), max(newest, hi)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("journal chains of %s: %w", chainType, err)
	}
	if len(chains) == 0 {
		return nil
	}
	byAddr := map[string]*staleTimes{}
	for _, p := range pending {
		byAddr[p.addr] = p
	}
	window := firstJournalWindow.Milliseconds()
	for hi := newest + 1; len(byAddr) > 0 && hi > oldest; window *= 2 {
		lo := max(hi-window, oldest)
		if err := readJournalWindow(ctx, tx, chains, lo, hi, byAddr); err != nil {
			return fmt.Errorf("journal times of %s: %w", chainType, err)
		}
		for a, p := range byAddr {
			if (!p.needLast || p.found && p.jLast >= lo) && (!p.needFirst || lo <= p.first) {
				delete(byAddr, a)
			}
		}
		hi = lo
	}
	return nil
}

// readJournalWindow merges the first and last times of the surviving journal transfers of the
// addresses of byAddr in chains' blocks of [lo, hi) into them.
func readJournalWindow(ctx context.Context, tx pgx.Tx, chains []string, lo, hi int64, byAddr map[string]*staleTimes) error {
	addrs := make([]string, 0, len(byAddr))
	for a := range byAddr {
		addrs = append(addrs, a)
	}
	rows, err := tx.Query(ctx, journalTimesSQL, chains, lo, hi, addrs)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var a string
		var first, last int64
		if err := rows.Scan(&a, &first, &last); err != nil {
			return err
		}
		p := byAddr[a]
		if !p.found {
			p.found, p.jFirst, p.jLast = true, first, last
			continue
		}
		p.jFirst, p.jLast = min(p.jFirst, first), max(p.jLast, last)
	}
	return rows.Err()
}

// setTimes stores the recomputed times of stale: each needed one from the settled extremes and
// the surviving journal transfers read. An address with neither keeps its stored times: its
// count disagrees with the journal and the settled activity, which nothing is known to cause,
// and a time is not guessed.
func setTimes(ctx context.Context, tx pgx.Tx, stale []*staleTimes) error {
	var ct, addr []string
	var first, last []int64
	for _, s := range stale {
		if s.settled <= 0 && !s.found {
			continue
		}
		f, l := int64(math.MaxInt64), int64(math.MinInt64)
		if s.settled > 0 {
			f, l = s.settledFirst, s.settledLast
		}
		if s.found {
			f, l = min(f, s.jFirst), max(l, s.jLast)
		}
		if !s.needFirst {
			f = s.first
		}
		if !s.needLast {
			l = s.last
		}
		ct, addr, first, last = append(ct, s.ct), append(addr, s.addr), append(first, f), append(last, l)
	}
	if len(ct) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, activityTimesSetSQL, ct, addr, first, last); err != nil {
		return fmt.Errorf("set activity times a reorg took back: %w", err)
	}
	return nil
}
