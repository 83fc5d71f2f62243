package metering_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/edge/internal/metering"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/redis/go-redis/v9"
)

// Calls go on while Redis is stopped and started again, with its data (a network outage) or
// without (a restart of a Redis that keeps nothing): the consumer's batches that failed to reach
// Redis are retried as the consumer does, and afterwards every replica's period total and Redis's
// copy equal the durable ledger exactly — nothing spent during the outage is counted twice.
func TestCreditsConvergeToDurableLedgerAfterRedisOutage(t *testing.T) {
	for _, keepData := range []bool{true, false} {
		t.Run(fmt.Sprintf("keepData=%v", keepData), func(t *testing.T) { convergesAfterOutage(t, keepData) })
	}
}

func convergesAfterOutage(t *testing.T, keepData bool) {
	ctx := context.Background()
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	// No retries: each call to a stopped Redis fails at once.
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	store := usage.NewStore(pgtest.Pool(t))
	user := fmt.Sprintf("outage-%v-%d", keepData, time.Now().UnixNano())
	e := usage.Entity{Type: usage.EntityUser, ID: user}
	replicas := []*metering.CreditLedger{
		metering.NewCreditLedger(rdb, store, metering.LedgerOptions{Timeout: 50 * time.Millisecond}),
		metering.NewCreditLedger(rdb, store, metering.LedgerOptions{Timeout: 50 * time.Millisecond}),
	}
	agg := &metering.Aggregator{Store: store, Ledger: replicas[0], Included: func(string) int64 { return 1000 }}
	var failed [][]usage.Call // batches the consumer must retry
	n := 0
	// spend makes one call of 3 credits on each replica and has the consumer count them.
	spend := func() {
		var batch []usage.Call
		for _, l := range replicas {
			if _, err := l.Used(ctx, e); err != nil {
				t.Fatal(err)
			}
			n++
			_, ev := settle(t, l, e, time.Now(), 3)
			l.Sent([]eventbus.Event{ev}, nil) // published, as the producer reports
			batch = append(batch, callOf(ev))
		}
		if _, err := store.Apply(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if err := agg.Ledger.Publish(ctx, batch); err != nil {
			failed = append(failed, batch)
		}
		for _, l := range replicas {
			l.Sync(ctx)
		}
	}
	for i := 0; i < 20; i++ {
		spend()
	}
	m.Close() // Redis goes away
	for i := 0; i < 30; i++ {
		spend()
	}
	if len(failed) < 30 {
		t.Fatalf("%d batches failed to reach a stopped Redis, want 30", len(failed))
	}
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	if !keepData {
		m.FlushAll()
	}
	for i := 0; i < 10; i++ {
		spend()
	}
	for _, b := range failed {
		publishUntilRedisAnswers(t, agg.Ledger, b)
	}
	tot, err := store.PeriodTotal(ctx, e, mustPeriod(time.Now()))
	durable := tot.Used
	if err != nil || durable != int64(n)*3 {
		t.Fatalf("durable ledger: %d %v, want %d", durable, err, n*3)
	}
	for i, l := range replicas {
		l.Sync(ctx)
		if used, _ := l.Used(ctx, e); used != durable {
			t.Errorf("replica %d: period total %d, durable ledger %d", i, used, durable)
		}
	}
	start := mustPeriod(time.Now())
	if got := m.HGet("edge:credits:v2:user:"+user+":"+start.Format("2006-01"), "used"); got != fmt.Sprint(durable) {
		t.Errorf("Redis holds %s, durable ledger %d", got, durable)
	}
}

// publishUntilRedisAnswers retries a batch's totals as the consumer does (with backoff), now
// that Redis is back.
func publishUntilRedisAnswers(t *testing.T, l *metering.CreditLedger, batch []usage.Call) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for err := l.Publish(context.Background(), batch); err != nil; err = l.Publish(context.Background(), batch) {
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func mustPeriod(t time.Time) time.Time { s, _ := usage.PeriodOf(t); return s }
