package edge_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/chainintel/chainintel/services/edge"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/redis/go-redis/v9"
)

// Through the whole edge (limiter, ledger, usage producer, broker, metering consumer): calls go
// on while the edge's Redis is stopped and started again empty. Every call is answered, and once
// the consumer has caught up the period total the edge answers with, Redis's copy and the
// durable ledger are the same number: the credits of the calls made, none counted twice.
func TestCreditsExactThroughRedisStopAndStart(t *testing.T) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, DialerRetries: 1, DialTimeout: 50 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	e := newEdge(t, edgeOpts{redis: rdb, redisURL: "redis://" + m.Addr() + "/0"})
	raw, k := e.key(t, edge.KeySpec{Tier: "api"})
	const perCall = 2 // GET /tx/{hash}
	calls := 0
	spend := func(n int) {
		for i := 0; i < n; i++ {
			r := e.get(fmt.Sprintf("/tx/0x%064x", calls), raw)
			if r.Status != 200 {
				t.Fatalf("call %d: %d %s", calls, r.Status, r.Body)
			}
			calls++
			time.Sleep(10 * time.Millisecond) // within the api tier's rate
		}
	}
	spend(20)
	m.Close()
	spend(20)
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	m.FlushAll() // it kept nothing
	spend(20)
	want := int64(calls * perCall)
	entity := usage.BilledEntity(k.UserID, k.OrgID)
	start, _ := usage.PeriodOf(time.Now())
	eventually(t, 30*time.Second, func() error {
		tot, err := e.Usage.PeriodTotal(context.Background(), entity, start)
		durable := tot.Used
		if err != nil {
			return err
		}
		shared := m.HGet("edge:credits:v2:"+entity.Type+":"+entity.ID+":"+start.Format("2006-01"), "used")
		answered := e.get("/chains", raw).Header.Get("X-Credits-Period-Used")
		if durable != want || shared != strconv.FormatInt(want, 10) || answered != shared {
			return fmt.Errorf("durable %d, Redis %q, answered %q; want %d", durable, shared, answered, want)
		}
		return nil
	})
}
