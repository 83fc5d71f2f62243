package intelligence

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/publish"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/jackc/pgx/v5"
)

// topicLog is the attributions topic as the relay and a republish publish to it, in order.
type topicLog struct {
	mu  sync.Mutex
	got []eventbus.Event
}

func (l *topicLog) Publish(_ context.Context, evs ...eventbus.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, evs...)
	return nil
}

func (l *topicLog) last(key string) (eventbus.Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.got) - 1; i >= 0; i-- {
		if l.got[i].Key == key {
			return l.got[i], true
		}
	}
	return eventbus.Event{}, false
}

// heldBus calls hold before its first publish, then publishes to log.
type heldBus struct {
	log   *topicLog
	hold  func() error
	calls int
}

func (b *heldBus) Publish(ctx context.Context, evs ...eventbus.Event) error {
	b.calls++
	if b.calls == 1 {
		if err := b.hold(); err != nil {
			return err
		}
	}
	return b.log.Publish(ctx, evs...)
}

const hot2 = "0x2222222222222222222222222222222222222222"

// TestRepublishRacingChangesLeavesNewestLast checks that a relabel and a tombstone committed
// after a republish page was read, and relayed while the page is being published, still end
// last on the topic: the page is held until the relay has either published them (jumping ahead
// of the page's older versions) or is seen waiting for its turn.
func TestRepublishRacingChangesLeavesNewestLast(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	cfg := testConfig(t)
	pool := pgtest.Pool(t)
	st := store.New(pool)
	if _, err := ImportCurated(ctx, cfg, strings.NewReader(`{"entities":[{"id":"acme","name":"Acme","type":"cex"}]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportCurated(ctx, cfg, strings.NewReader("chain_type,address,entity,label,confidence\nevm,"+hot1+",acme,Hot,1\nevm,"+hot2+",acme,Cold,1\n")); err != nil {
		t.Fatal(err)
	}
	log := &topicLog{}
	if _, err := publish.Drain(ctx, st, log); err != nil {
		t.Fatal(err)
	}
	relayDone := make(chan error, 1)
	bus := &heldBus{log: log, hold: func() error {
		// Relabel hot1 and clear everything known of hot2 (a tombstone), then relay.
		if _, err := ImportCurated(ctx, cfg, strings.NewReader("chain_type,address,entity,label,confidence\nevm,"+hot1+",acme,Hotter,1\n")); err != nil {
			return err
		}
		// As the store writes a version: under its version lock.
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(x'696e74656c'::bigint)`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE intel.addresses SET entity_id = NULL, label = '', confidence = 0, source = '',
				version = nextval('intel.attribution_version') WHERE chain_type = 'evm' AND address = $1`, hot2)
			return err
		}); err != nil {
			return err
		}
		go func() {
			_, err := publish.Drain(ctx, st, log)
			relayDone <- err
		}()
		deadline := time.Now().Add(30 * time.Second)
		for {
			select {
			case err := <-relayDone:
				relayDone <- err
				return nil
			default:
			}
			var waiting bool
			if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
				AND query LIKE '%intel.publish_cursor%FOR UPDATE%' AND pid <> pg_backend_pid())`).Scan(&waiting); err != nil {
				return err
			}
			if waiting {
				return nil
			}
			if time.Now().After(deadline) {
				return errors.New("the relay neither finished nor waited for its turn")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}}
	if n, err := publish.Republish(ctx, st, bus); err != nil || n != 2 {
		t.Fatalf("republish: %d, %v", n, err)
	}
	if err := <-relayDone; err != nil {
		t.Fatal(err)
	}
	relabelled, err := st.Attribution(ctx, "evm", hot1)
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := log.last(eventsv1.AttributionKey("evm", hot1))
	if m, _ := ev.Msg.(*eventsv1.Attribution); !ok || m.GetLabel() != "Hotter" || m.GetVersion() != relabelled.Version {
		t.Errorf("last event of hot1: %v, want the relabel at version %d", ev.Msg, relabelled.Version)
	}
	cleared, err := st.Attribution(ctx, "evm", hot2)
	if err != nil {
		t.Fatal(err)
	}
	ev, ok = log.last(eventsv1.AttributionKey("evm", hot2))
	if !ok || ev.Msg != nil || ev.ID != publish.Event(cleared).ID {
		t.Errorf("last event of hot2: %s %v, want the tombstone %s", ev.ID, ev.Msg, publish.Event(cleared).ID)
	}
}
