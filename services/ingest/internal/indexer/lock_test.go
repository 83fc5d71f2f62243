package indexer_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/ingest/internal/evm"
	"github.com/chainintel/chainintel/services/ingest/internal/store"
)

// countingPublisher counts the Publish calls that reached the broker.
type countingPublisher struct {
	p     *eventbus.Publisher
	calls atomic.Int64
}

func (c *countingPublisher) Publish(ctx context.Context, ev ...eventbus.Event) error {
	if err := c.p.Publish(ctx, ev...); err != nil {
		return err
	}
	c.calls.Add(1)
	return nil
}

// Two ingesters of one chain on one database: the second stands by while the first holds the
// chain's lock, and takes over, from the first's cursor, once it stops. A write of a round that
// started from a cursor another ingester has since moved is refused.
func TestOneIngesterPerChain(t *testing.T) {
	c := branch("L", 30, nil, 0)
	sc := &scriptedChain{}
	sc.set(c, 10)
	// Every EVM chain of the catalogue is some test's; this one starts from none of base's state.
	for _, table := range []string{"cursors", "blocks", "orphaned", "rebalance", "tokens", "pools"} {
		if _, err := pgtest.Pool(t).Exec(context.Background(), "DELETE FROM ingest."+table+" WHERE chain = 'base'"); err != nil {
			t.Fatal(err)
		}
	}
	r := newRig(t, "base", sc.handler())
	atCursor := func(n uint64) func() error {
		return func() error {
			cur, ok, err := r.st.Cursor(context.Background(), "base")
			if err != nil || !ok || cur.Number != n {
				return fmt.Errorf("cursor %v %v %v, want block %d", cur, ok, err, n)
			}
			return nil
		}
	}
	first, second := &countingPublisher{p: r.pub}, &countingPublisher{p: r.pub}
	run := func(p *countingPublisher) (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.indexer(p, 1).Run(ctx) }()
		var once sync.Once
		stop = func() {
			once.Do(func() {
				cancel()
				if err := <-done; err != nil {
					t.Error(err)
				}
			})
		}
		t.Cleanup(stop)
		return stop
	}
	stopFirst := run(first)
	eventually(t, 20*time.Second, atCursor(10))
	run(second)
	sc.set(c, 20)
	eventually(t, 20*time.Second, atCursor(20))
	time.Sleep(500 * time.Millisecond) // the second's attempts to take the lock
	if n := second.calls.Load(); n != 0 {
		t.Fatalf("the second ingester published %d times while the first held the lock", n)
	}
	stopFirst()
	sc.set(c, 30)
	eventually(t, 20*time.Second, atCursor(30))
	if second.calls.Load() == 0 {
		t.Fatal("the second ingester did not take over")
	}
	w := expect(c, 30, nil)
	eventually(t, 20*time.Second, func() error { return check(r.sink, "base", w) })

	ctx := context.Background()
	stale := store.Cursor{Number: 20, Hash: evm.HashHex(c[20].hash)}
	next := store.Cursor{Number: 21, Hash: evm.HashHex(c[21].hash)}
	if err := r.st.Commit(ctx, "base", &stale, next, nil, 0); !errors.Is(err, store.ErrCursorMoved) {
		t.Errorf("commit from a stale cursor: %v", err)
	}
	if err := r.st.Commit(ctx, "base", nil, next, nil, 0); !errors.Is(err, store.ErrCursorMoved) {
		t.Errorf("commit of a first cursor where one exists: %v", err)
	}
	if err := r.st.Rewind(ctx, "base", stale, store.Cursor{Number: 5, Hash: evm.HashHex(c[5].hash)}, nil); !errors.Is(err, store.ErrCursorMoved) {
		t.Errorf("rewind from a stale cursor: %v", err)
	}
	eventually(t, time.Second, atCursor(30))
}
