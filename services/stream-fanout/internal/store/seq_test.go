package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
)

// TestNextSeqPerKeyAfterSharedCounter: each key numbers its own streams from 1, and a key that
// already holds streams numbered by the counter every key once shared (or whose counter Redis
// lost) goes on above the highest of them instead of repeating one.
func TestNextSeqPerKeyAfterSharedCounter(t *testing.T) {
	rdb, _ := redistest.Client(t)
	s := New(rdb, fmt.Sprintf("q%d:", rand.Uint64()), nil)
	ctx := context.Background()
	for _, seq := range []int64{3, 57} { // made under the shared counter
		if err := s.Create(ctx, Session{ID: fmt.Sprint("old", seq), KeyID: "a", Kind: "v2", Seq: seq, Created: time.Now()}, time.Minute, 0); err != nil {
			t.Fatal(err)
		}
	}
	for want, key := range map[int64]string{58: "a", 1: "b"} {
		if got, err := s.NextSeq(ctx, key); err != nil || got != want {
			t.Fatalf("NextSeq(%s) = %d, %v; want %d", key, got, err, want)
		}
	}
	if got, _ := s.NextSeq(ctx, "a"); got != 59 {
		t.Fatalf("a's next = %d, want 59", got)
	}
	if got, _ := s.NextSeq(ctx, "b"); got != 2 {
		t.Fatalf("b's next = %d, want 2", got)
	}
}
