package engine

import (
	"fmt"
	"slices"
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// A catch-up's seen holds the transfers that matched, not every record it read: records that
// match nothing leave no entry, while a copy of one that matched is still skipped.
func TestSeenHoldsOnlyWhatMatched(t *testing.T) {
	e, sub, _ := copiesEngine(t, 16)
	seen := Seen{}
	var recs []Record
	for i := range 1000 {
		recs = append(recs, Record{Part: 0, Off: int64(i), Msg: &eventsv1.Transfer{Id: fmt.Sprintf("o%d", i), Chain: "ethereum",
			TransactionHash: "0x1", BlockHash: "0xb1", BlockTimeMs: 1, From: addr(3), To: addr(2)}})
	}
	recs = append(recs, copyRec(1000, "a", "0xb1"), copyRec(1001, "a", "0xb1"))
	if got := offsets(e.MatchOne(sub, recs, seen)); !slices.Equal(got, []int64{1000}) {
		t.Fatalf("delivered offsets %v, want [1000] (the copy at 1001 skipped)", got)
	}
	if len(seen) != 1 {
		t.Fatalf("seen holds %d entries after 1,000 records matching nothing and two copies of one that matched, want 1", len(seen))
	}
}
