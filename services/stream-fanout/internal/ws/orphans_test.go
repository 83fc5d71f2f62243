package ws

import (
	"testing"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/orphans"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
)

// A session's replay buffer holds transfers rendered when it was saved: one of a block a reorg
// orphaned since is not replayed; others, and a message that does not decode, are.
func TestOrphanedRaw(t *testing.T) {
	saved := func(chain, block string) []byte {
		tr := render.TransferOf(&eventsv1.Transfer{Id: "0x1_0", Chain: chain, TransactionHash: "0x1", BlockHash: block, BlockTimeMs: 1}, nil, nil)
		return appendTransfer(nil, "alert", render.JSON(&tr))
	}
	set := orphans.New(time.Hour, nil)
	h := &Hub{o: Options{Orphans: set}}
	if h.orphanedRaw(saved("ethereum", "0xaa"), nil) {
		t.Fatal("nothing orphaned yet")
	}
	set.Apply(&eventsv1.Reorg{Chain: "ethereum", Orphaned: []*eventsv1.Reorg_Block{{Hash: "0xAA"}}}, time.Now())
	if !h.orphanedRaw(saved("ethereum", "0xaa"), nil) {
		t.Fatal("a saved transfer of an orphaned block would be replayed")
	}
	if h.orphanedRaw(saved("ethereum", "0xbb"), nil) || h.orphanedRaw(saved("polygon", "0xaa"), nil) || h.orphanedRaw([]byte("{"), nil) {
		t.Fatal("a transfer of another block, or an undecodable message, would not be replayed")
	}
}
