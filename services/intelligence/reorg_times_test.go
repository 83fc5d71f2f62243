package intelligence

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// timesWorld feeds transfer batches and reorgs through the consumers' handlers.
type timesWorld struct {
	t      *testing.T
	h      events.Handlers
	offset int64
}

func (w *timesWorld) transfers(ts ...*eventsv1.Transfer) {
	w.t.Helper()
	ms := msgs(eventsv1.TopicTransfers, ts...)
	for i := range ms {
		ms[i].Partition, ms[i].Offset = 0, w.offset
		w.offset++
	}
	if err := w.h.Transfers(context.Background(), ms); err != nil {
		w.t.Fatal(err)
	}
}

func (w *timesWorld) orphan(chain string, hashes ...string) {
	w.t.Helper()
	r := &eventsv1.Reorg{Chain: chain}
	for _, h := range hashes {
		r.Orphaned = append(r.Orphaned, &eventsv1.Reorg_Block{Hash: h})
	}
	for range 2 { // redelivered: changes nothing
		if err := w.h.Reorgs(context.Background(), []eventbus.Message[*eventsv1.Reorg]{{Topic: eventsv1.TopicReorgs, Msg: r}}); err != nil {
			w.t.Fatal(err)
		}
	}
}

// activityTimes renders the first and last times of addrs (evm), "-" for an address without
// activity.
func activityTimes(t *testing.T, addrs ...string) string {
	t.Helper()
	var out []string
	for _, a := range addrs {
		var first, last int64
		err := pgtest.Pool(t).QueryRow(context.Background(), `SELECT first_ms, last_ms FROM intel.address_activity
			WHERE chain_type = 'evm' AND address = $1`, a).Scan(&first, &last)
		switch {
		case err != nil && strings.Contains(err.Error(), "no rows"):
			out = append(out, "-")
		case err != nil:
			t.Fatal(err)
		default:
			out = append(out, fmt.Sprintf("%d..%d", first, last))
		}
	}
	return strings.Join(out, " ")
}

func timesTransfer(id, chain, block, from, to string, ms int64) *eventsv1.Transfer {
	return &eventsv1.Transfer{Id: id, Chain: chain, BlockHash: block, From: from, To: to, BlockTimeMs: ms, HistoricalUsd: usd(1), Amount: "1"}
}

// A reorg taking back an address's last (first) transfer gives it the time of its last (first)
// transfer still counted, read from the journal: c1's and d1's last go back to the block before
// the orphaned one; c2, first seen in the orphaned block, keeps its later transfer on another
// chain of its chain type as its first; x and y, seen only there, go away; u1's last goes back
// to its transfer without a block hash (settled at once: no journal holds it). The result is
// what the kept blocks alone give.
func TestReorgTakesBackFirstAndLastTimesFromTheJournal(t *testing.T) {
	c1, c2, c3, d1, d2, x, y, u1, u2 := addr(0xc1), addr(0xc2), addr(0xc3), addr(0xd1), addr(0xd2), addr(0xe1), addr(0xe2), addr(0xf1), addr(0xf2)
	kept := []*eventsv1.Transfer{
		timesTransfer("a", "ethereum", "0xb1", c1, d1, 1000),
		timesTransfer("b", "ethereum", "0xb2", c1, d1, 2000), timesTransfer("c", "ethereum", "0xb2", c3, d1, 2000),
		timesTransfer("p", "base", "0xp1", d2, c2, 3500), timesTransfer("u", "ethereum", "", u1, u2, 500),
	}
	orphaned := []*eventsv1.Transfer{
		timesTransfer("d", "ethereum", "0xb3", c1, d1, 3000), timesTransfer("e", "ethereum", "0xb3", x, y, 3000),
		timesTransfer("f", "ethereum", "0xb3", c2, d1, 3000), timesTransfer("g", "ethereum", "0xb3", c3, c3, 3000),
		timesTransfer("v", "ethereum", "0xb3", u1, x, 3000),
	}
	w := &timesWorld{t: t, h: events.Handlers{Store: store.New(pgtest.Pool(t))}}
	resetDB(t)
	w.transfers(kept...)
	want := heuristicInputs(t, pgtest.Pool(t))

	resetDB(t)
	w.transfers(kept[:3]...)
	w.transfers(orphaned...)
	w.transfers(kept[3:]...)
	if got, want := activityTimes(t, c1, c2, d1), "1000..3000 3000..3500 1000..3000"; got != want {
		t.Fatalf("before the reorg: %s, want %s", got, want)
	}
	w.orphan("ethereum", "0xb3")
	if got, want := activityTimes(t, c1, c2, c3, d1, x, y, u1), "1000..2000 3500..3500 2000..2000 1000..2000 - - 500..500"; got != want {
		t.Fatalf("after the reorg: %s, want %s", got, want)
	}
	if got := heuristicInputs(t, pgtest.Pool(t)); got != want {
		t.Fatalf("after the reorg:\n%s\nwant (the kept blocks alone):\n%s", got, want)
	}
}

// The same when the transfer to fall back to has aged out of the journal (pruned): c4's only
// other transfer was pruned, so its times come from its settled activity; c1 has a surviving
// journal transfer newer than its settled ones. Pruning then reorging ends as the kept blocks
// alone, settled activity included.
func TestReorgTakesBackTimesPastTheJournal(t *testing.T) {
	retention := store.JournalRetention
	store.JournalRetention = time.Hour
	t.Cleanup(func() { store.JournalRetention = retention })
	const hour = int64(time.Hour / time.Millisecond)
	c1, c4, d1, e1, e2 := addr(0xc1), addr(0xc4), addr(0xd1), addr(0xe1), addr(0xe2)
	kept := [][]*eventsv1.Transfer{
		{timesTransfer("a", "ethereum", "0xa1", c1, d1, 1000), timesTransfer("b", "ethereum", "0xa1", c4, d1, 1000)},
		{timesTransfer("c", "ethereum", "0xa2", e1, e2, 2*hour)}, // prunes 0xa1
		{timesTransfer("d", "ethereum", "0xa3", c1, d1, 2*hour+2000)},
	}
	orphaned := []*eventsv1.Transfer{timesTransfer("e", "ethereum", "0xa4", c1, d1, 2*hour+3000), timesTransfer("f", "ethereum", "0xa4", c4, d1, 2*hour+3000)}
	w := &timesWorld{t: t, h: events.Handlers{Store: store.New(pgtest.Pool(t))}}
	resetDB(t)
	for _, b := range kept {
		w.transfers(b...)
	}
	want := heuristicInputs(t, pgtest.Pool(t))
	if !strings.Contains(want, "settled") {
		t.Fatalf("nothing settled: the test would prove nothing:\n%s", want)
	}

	resetDB(t)
	w = &timesWorld{t: t, h: events.Handlers{Store: store.New(pgtest.Pool(t))}} // a store remembers its prunes (journalPrunes)
	for _, b := range append(kept, orphaned) {
		w.transfers(b...)
	}
	w.orphan("ethereum", "0xa4")
	if got, want := activityTimes(t, c1, c4, d1), fmt.Sprintf("1000..%d 1000..1000 1000..%[1]d", 2*hour+2000); got != want {
		t.Fatalf("after the reorg: %s, want %s", got, want)
	}
	if got := heuristicInputs(t, pgtest.Pool(t)); got != want {
		t.Fatalf("after the reorg:\n%s\nwant (the kept blocks alone):\n%s", got, want)
	}
}

// An operator entity's summary follows: the reorg in the audit orphaned the blocks with acme's
// newest transfer, and lastTx goes back to its newest transfer still counted, with volumeUsd.
func TestEntitySummaryTimesAfterAReorg(t *testing.T) {
	pool := pgtest.Pool(t)
	st := store.New(pool)
	w := &timesWorld{t: t, h: events.Handlers{Store: st}}
	v := newVolumeWorld()
	tr := func(id, chain, block, from, to string, ms int64, value float64) *eventsv1.Transfer {
		m := timesTransfer(id, chain, block, from, to, ms)
		m.HistoricalUsd = usd(value)
		return m
	}
	resetDB(t)
	v.importAttribution(t, "acme", "acme", "other")
	w.transfers(tr("a", "ethereum", "0xb1", v.c1, v.h1, 1000, 100), tr("b", "ethereum", "0xb2", v.h2, v.c2, 2000, 30),
		tr("o", "base", "0xp1", v.o1, v.c1, 4000, 7))
	w.transfers(tr("c", "ethereum", "0xb3", v.c1, v.h1, 3000, 50), tr("d", "ethereum", "0xb4", v.c2, v.h2, 3500, 1))
	const t1, t2, t35, t4 = "1970-01-01T00:00:01Z", "1970-01-01T00:00:02Z", "1970-01-01T00:00:03.5Z", "1970-01-01T00:00:04Z"
	if got, want := summaries(t, st), summaryLine("acme", 2, 181, t1, t35, 4)+summaryLine("other", 1, 7, t4, t4, 1); got != want {
		t.Fatalf("before the reorg:\n got %s\nwant %s", got, want)
	}
	w.orphan("ethereum", "0xb3", "0xb4")
	if got, want := summaries(t, st), summaryLine("acme", 2, 130, t1, t2, 2)+summaryLine("other", 1, 7, t4, t4, 1); got != want {
		t.Fatalf("after the reorg:\n got %s\nwant %s", got, want)
	}
}
