package redisx_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
)

// TestFollowResyncAfterReconnect: resync runs when the subscription starts and again each time
// it comes back after its connection dropped, and messages flow on the new subscription.
func TestFollowResyncAfterReconnect(t *testing.T) {
	rdb, _ := redistest.Client(t)
	channel := fmt.Sprintf("follow-test-%d", rand.Uint64()) // channels are shared by every database
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resyncs, got := make(chan struct{}, 8), make(chan string, 8)
	done := make(chan error, 1)
	go func() {
		done <- redisx.FollowResync(ctx, rdb, channel, func(context.Context) { resyncs <- struct{}{} }, func(p string) { got <- p })
	}()
	wait := func(what string) {
		t.Helper()
		select {
		case <-resyncs:
		case <-time.After(20 * time.Second):
			t.Fatalf("no resync %s", what)
		}
	}
	wait("at the start")
	if n := redistest.DropSubscribers(t, rdb); n != 1 {
		t.Fatalf("dropped %d subscriptions, want 1", n)
	}
	wait("after the subscription dropped")
	if err := rdb.Publish(ctx, channel, "after").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-got:
		if p != "after" {
			t.Fatalf("got %q", p)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no message on the new subscription")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
