package store_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
)

// Replicas keep attributions in process; every change to the read model (an upsert, a newer
// version, a tombstone, an address attributed for the first time) shows on the next read of
// every replica, including one that had not read for longer than the change log keeps entries.
// Each read is compared with a store that keeps no cache.
func TestAttributionCacheFollowsChanges(t *testing.T) {
	ctx := context.Background()
	pool, h, writer := loadedWorld(t)
	replica := newStore(pool)
	// A cache smaller than the keys read: every read has keys cached (some since changed) and
	// keys not, so it takes the one-statement read of the change log and the missing keys.
	small := newStore(pool, func(o *store.Options) { o.AttributionCache = 3 })
	truth := newStore(pool, func(o *store.Options) { o.AttributionCache = 0 })
	const fresh = "0x60000000000000000000000000000000000000aa" // no attribution yet
	var keys []store.AddressKey
	for _, a := range []string{tw.H1, tw.D1, tw.H2, tw.D3, tw.U1, tw.U2, fresh} {
		keys = append(keys, store.AddressKey{ChainType: "evm", Address: a})
	}
	check := func(step string) {
		t.Helper()
		want, err := truth.Attributions(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		for name, st := range map[string]*store.Store{"writer": writer, "replica": replica, "small cache": small} {
			for range 2 { // the second read is answered from the cache
				got, err := st.Attributions(ctx, keys)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, %s:\n got %s\nwant %s", step, name, show(got), show(want))
				}
			}
		}
	}
	check("loaded")
	apply := func(msgs []*eventsv1.Attribution, tombstones ...string) {
		t.Helper()
		batch := tw.Msgs(msgs)
		for _, a := range tombstones {
			m := tw.Msgs([]*eventsv1.Attribution{{}})[0]
			m.Tombstone, m.Key = true, eventsv1.AttributionKey("evm", a)
			batch = append(batch, m)
		}
		if err := h.Attributions(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	// A relabel, a stale version (ignored), a first attribution and a tombstone.
	apply([]*eventsv1.Attribution{
		tw.Attribution(tw.U2, tw.Coinbase, "Customer", "", false, 2),
		tw.Attribution(tw.H1, tw.Coinbase, "stale", "", false, 1),
		tw.Attribution(fresh, tw.Binance, "New Hot Wallet", "", false, 1),
	}, tw.D3)
	check("after a relabel, a first attribution and a tombstone")

	// The replica reads nothing while the log moves on and its older entries are pruned: its
	// next read must not trust what it holds. The small cache holds the address about to move
	// (and misses the others, so it reads the log and the missing keys in one statement).
	if _, err := small.Attributions(ctx, keys[len(keys)-1:]); err != nil {
		t.Fatal(err)
	}
	apply([]*eventsv1.Attribution{tw.Attribution(fresh, tw.Coinbase, "Moved", "", false, 2)})
	if _, err := writer.Attributions(ctx, keys); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE transfers.attribution_changes SET at = now() - interval '2 hours'`); err != nil {
		t.Fatal(err)
	}
	apply([]*eventsv1.Attribution{tw.Attribution(tw.U1, tw.A16z, "Partner", "", false, 5)})
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM transfers.attribution_changes`).Scan(&left); err != nil || left != 1 {
		t.Fatalf("change log after pruning: %d entries (%v), want 1", left, err)
	}
	check("after pruning")
}

func show(m map[store.AddressKey]store.Attribution) string {
	s := ""
	for k, a := range m {
		s += fmt.Sprintf("\n  %s: %q %+v %+v v%d", k.Address, a.Label, a.Entity, a.Predicted, a.Version)
	}
	return s
}

// Reads racing with attribution batches leave no stale entry: once the batches are done, every
// replica's next read equals the read model.
func TestAttributionCacheUnderConcurrentChanges(t *testing.T) {
	ctx := context.Background()
	pool, h, _ := loadedWorld(t)
	truth := newStore(pool, func(o *store.Options) { o.AttributionCache = 0 })
	replicas := []*store.Store{newStore(pool), newStore(pool),
		newStore(pool, func(o *store.Options) { o.AttributionCache = 3 })} // fewer than the keys: every read has some missing
	addrs := []string{tw.H1, tw.D1, tw.H2, tw.U1, tw.U2}
	var keys []store.AddressKey
	for _, a := range addrs {
		keys = append(keys, store.AddressKey{ChainType: "evm", Address: a})
	}
	done := make(chan struct{})
	errs := make(chan error, 8)
	for _, r := range replicas {
		for range 2 {
			go func() {
				for {
					select {
					case <-done:
						errs <- nil
						return
					default:
					}
					if _, err := r.Attributions(ctx, keys); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	for v := int64(10); v < 40; v++ {
		var batch []*eventsv1.Attribution
		for i, a := range addrs {
			if (int(v)+i)%2 == 0 {
				batch = append(batch, tw.Attribution(a, tw.Coinbase, fmt.Sprint("label ", v), "", false, v))
			}
		}
		if err := h.Attributions(ctx, tw.Msgs(batch)); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for range 2 * len(replicas) {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	want, err := truth.Attributions(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range replicas {
		got, err := r.Attributions(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("replica %d after the batches:\n got %s\nwant %s", i, show(got), show(want))
		}
	}
}

// A replica whose cache is more changes behind than a read applies at once (a relabel of a whole
// entity, say) does not trust what it holds: the changes to two addresses it holds come after
// 5,000 others; its next read, of one of them and a key it does not hold, sees the change, and
// so does a later read of the other.
func TestAttributionCacheBehindManyChanges(t *testing.T) {
	ctx := context.Background()
	pool, h, _ := loadedWorld(t)
	replica := newStore(pool)
	truth := newStore(pool, func(o *store.Options) { o.AttributionCache = 0 })
	u1, u2 := store.AddressKey{ChainType: "evm", Address: tw.U1}, store.AddressKey{ChainType: "evm", Address: tw.U2}
	if _, err := replica.Attributions(ctx, []store.AddressKey{u1, u2}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO transfers.attribution_changes (chain_type, address)
		SELECT 'evm', '0x7' || lpad(i::text, 39, '0') FROM generate_series(1, 5000) i`); err != nil {
		t.Fatal(err)
	}
	if err := h.Attributions(ctx, tw.Msgs([]*eventsv1.Attribution{
		tw.Attribution(tw.U1, tw.A16z, "Relabelled", "", false, 9),
		tw.Attribution(tw.U2, tw.Coinbase, "Relabelled", "", false, 9),
	})); err != nil {
		t.Fatal(err)
	}
	for _, keys := range [][]store.AddressKey{{u2, {ChainType: "evm", Address: tw.H1}}, {u1}} {
		want, err := truth.Attributions(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		if want[keys[0]].Label != "Relabelled" {
			t.Fatalf("the read model has %q for %s", want[keys[0]].Label, keys[0].Address)
		}
		got, err := replica.Attributions(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %s\nwant %s", show(got), show(want))
		}
	}
}
