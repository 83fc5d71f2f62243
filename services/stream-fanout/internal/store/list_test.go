package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/redis/go-redis/v9"
)

// roundTrips counts the commands and pipelines a client sends, each one round trip, except a
// new connection's handshake (HELLO, SELECT, CLIENT SETINFO): when the pool dials is go-redis's
// business, not the cost of the call measured.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func handshake(cmds []redis.Cmder) bool {
	switch cmds[0].Name() {
	case "hello", "select", "client", "auth":
		return true
	}
	return false
}
func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !handshake([]redis.Cmder{cmd}) {
			r.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !handshake(cmds) {
			r.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// TestListIsBatched: listing a key's sessions reads them in pipelined batches (a round trip per
// listBatch sessions, not one per session), drops the expired ones from the key's set, and Live
// counts the same sessions in two round trips.
func TestListIsBatched(t *testing.T) {
	rdb, _ := redistest.Client(t)
	s := New(rdb, fmt.Sprintf("l%d:", rand.Uint64()), nil)
	ctx := context.Background()
	const n = 1200
	for i := range n {
		ttl := time.Minute
		if i%100 == 0 {
			ttl = time.Millisecond // expires before the list
		}
		if err := s.Create(ctx, Session{ID: fmt.Sprintf("s%04d", i), KeyID: "k", Kind: "v2", Created: time.Now()}, ttl, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, Session{ID: "other", KeyID: "k2", Kind: "v2", Created: time.Now()}, time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	// A script Redis has not cached yet costs its EVALSHA and then an EVAL: loaded first, as any
	// earlier prune on this Redis leaves it, the prune is the one round trip counted below.
	if err := pruneScript.Load(ctx, rdb).Err(); err != nil {
		t.Fatal(err)
	}
	var rt roundTrips
	rdb.AddHook(&rt)
	all, err := s.List(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	want := n - n/100
	if len(all) != want {
		t.Fatalf("listed %d sessions, want %d", len(all), want)
	}
	// SMEMBERS, ceil(n/listBatch) pipelines, one SREM of the expired.
	if got, most := rt.n.Load(), int64(2+(n+listBatch-1)/listBatch); got > most {
		t.Fatalf("List took %d round trips for %d sessions, want at most %d", got, n, most)
	}
	if left := rdb.SCard(ctx, s.kkey("k")).Val(); left != int64(want) {
		t.Fatalf("the key's set holds %d ids after the list, want %d", left, want)
	}
	if live, err := s.Live(ctx, "k"); err != nil || live != want {
		t.Fatalf("Live = %d, %v; want %d", live, err, want)
	}
}
