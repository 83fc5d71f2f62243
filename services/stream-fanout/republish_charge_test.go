package streamfanout_test

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// TestRepublishedTransferStreamedAndChargedOnce: ingest publishes a round again after a publish
// that failed part way, so the same transfer (same event id) lands twice on chain.transfers.v1.
// It is streamed, and charged, once: to a connected client; to a session resumed on the
// replica that read both copies live; and to one resumed on a replica started after them,
// whose catch-up reads both for the first time. Each key pays 2 credits for its 2 transfers
// (3 when the copy was streamed too).
func TestRepublishedTransferStreamedAndChargedOnce(t *testing.T) {
	w := newWorld(t)
	fast := func(c *streamfanout.Config) { c.Checkpoint = 100 * time.Millisecond }
	r := w.start(fast)
	from := addr(80)
	filter := map[string]any{"from": []string{from}}
	live := w.dial(r, ident("krep"), "")
	live.subscribe(filter)
	idR, idB := ident("krep-r"), ident("krep-b")
	awayR, awayB := w.dial(r, idR, ""), w.dial(r, idB, "")
	_, sessR := awayR.subscribe(filter)
	_, sessB := awayB.subscribe(filter)
	w.away(r, awayR, idR, sessR)
	w.away(r, awayB, idB, sessB)

	tr := transferMsg(from, addr(81), 1)
	key := eventsv1.ChainKey(tr.Chain, tr.TransactionHash)
	ev := eventbus.Event{Topic: eventsv1.TopicTransfers, Key: key, Msg: tr, ID: "transfer:ethereum:" + tr.Id}
	for range 2 { // the round's first publish wrote it, then failed; the retry publishes it again
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := w.pub.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	sentinel := transferMsg(from, addr(81), 1)
	w.publishUnder(key, sentinel) // after both copies, in their partition
	expectOnce := func(name string, c *client) {
		t.Helper()
		for i, want := range []string{tr.Id, sentinel.Id} {
			if id, _, _ := c.transfer(); id != want {
				t.Fatalf("%s: delivery %d is %s, want %s (the copy is not streamed)", name, i, id, want)
			}
		}
	}
	expectOnce("live", live)
	expectOnce("resumed on the replica that read both", w.back(r, idR, sessR))
	b := w.start(fast)
	expectOnce("resumed on a replica started after both", w.back(b, idB, sessB))
	got := w.keyCredits(t, 8*time.Second, "krep", "krep-r", "krep-b")
	for _, k := range []string{"krep", "krep-r", "krep-b"} {
		if got[k] != 2 {
			t.Errorf("key %s charged %d credits for 2 transfers", k, got[k])
		}
	}
}
