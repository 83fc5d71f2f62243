package indexer_test

import (
	"fmt"
	"maps"
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/ingest/internal/evm"
)

// TestEveryIndexedBlockIsPublished: each indexed block, an empty one too, is one chain.blocks.v1
// record (key the chain, id "block:<chain>:<number>:<hash>") with its number, hash, time and
// transaction count, so the chain's tip is its newest indexed block and not the newest holding a
// transaction.
func TestEveryIndexedBlockIsPublished(t *testing.T) {
	bs := branch("E", 4, nil, 0)
	// Block 4 holds no transaction: balances stay as block 3 left them.
	bs[4].txs, bs[4].native, bs[4].tokens = nil, maps.Clone(bs[3].native), maps.Clone(bs[3].tokens)
	sc := &scriptedChain{}
	sc.set(bs, 4)
	r := newRig(t, "bsc", sc.handler())
	pub := &capture{}
	drain(t, r.indexer(pub, 1))

	var got []string
	for _, e := range pub.ev {
		b, ok := e.Msg.(*eventsv1.Block)
		if e.Topic != eventsv1.TopicBlocks || !ok {
			continue
		}
		if e.Key != "bsc" || e.ID != eventsv1.BlockEventID(b) {
			t.Errorf("block %d: key %q, id %q", b.Number, e.Key, e.ID)
		}
		got = append(got, fmt.Sprintf("%s %d %s %d %d", b.Chain, b.Number, b.Hash, b.TimeMs, b.Transactions))
	}
	var want []string
	for _, m := range bs[1:] {
		want = append(want, fmt.Sprintf("bsc %d %s %d %d", m.number, evm.HashHex(m.hash), (1_700_000_000+12*int64(m.number))*1000, len(m.txs)))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("chain.blocks.v1:\n got %v\nwant %v", got, want)
	}
}
