// Package redistest gives a test a real Redis database of its own. Test packages run in
// parallel, so each claims one of the server's numbered databases (1..15) with a key in database
// 0, flushes it, and releases it when the test ends.
//
// The server comes from CHAININTEL_TEST_REDIS_URL (default redis://127.0.0.1:6379/0). Tests
// fail, not skip, when it is unreachable.
package redistest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ServerURL is the Redis server tests use.
func ServerURL() string {
	if u := os.Getenv("CHAININTEL_TEST_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// Client returns a client on a freshly flushed database claimed for t, and that database's URL.
func Client(t testing.TB) (*redis.Client, string) {
	t.Helper()
	opt, err := redis.ParseURL(ServerURL())
	if err != nil {
		t.Fatalf("CHAININTEL_TEST_REDIS_URL: %v", err)
	}
	ctx := context.Background()
	admin := redis.NewClient(opt)
	defer admin.Close()
	if err := admin.Ping(ctx).Err(); err != nil {
		t.Fatalf("redis is not reachable at %s (%v); start it: redis-server --daemonize yes --port 6379", opt.Addr, err)
	}
	owner := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	deadline := time.Now().Add(60 * time.Second)
	for {
		for db := 1; db <= 15; db++ {
			claim := "chainintel:test:db:" + strconv.Itoa(db)
			ok, err := admin.SetNX(ctx, claim, owner, 10*time.Minute).Result()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				continue
			}
			o := *opt
			o.DB = db
			c := redis.NewClient(&o)
			if err := c.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = c.FlushDB(context.Background()).Err()
				_ = c.Close()
				a := redis.NewClient(opt)
				defer a.Close()
				if v, _ := a.Get(context.Background(), claim).Result(); v == owner {
					a.Del(context.Background(), claim)
				}
			})
			u := fmt.Sprintf("redis://%s/%d", opt.Addr, db)
			if opt.Password != "" {
				u = fmt.Sprintf("redis://:%s@%s/%d", opt.Password, opt.Addr, db)
			}
			return c, u
		}
		if time.Now().After(deadline) {
			t.Fatal("redistest: no free Redis database (all 15 claimed)")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// DropSubscribers closes the server's pub/sub connections on c's database (and only those:
// other tests share the server), as a network cut or a Redis failover would; their clients
// reconnect by themselves. It returns how many it closed.
func DropSubscribers(t testing.TB, c *redis.Client) int {
	t.Helper()
	ctx := context.Background()
	list, err := c.Do(ctx, "CLIENT", "LIST", "TYPE", "pubsub").Text()
	if err != nil {
		t.Fatalf("redistest: list subscribers: %v", err)
	}
	db := "db=" + strconv.Itoa(c.Options().DB)
	n := 0
	for _, line := range strings.Split(list, "\n") {
		fields := strings.Fields(line)
		if !slices.Contains(fields, db) {
			continue
		}
		for _, f := range fields {
			if id, ok := strings.CutPrefix(f, "id="); ok {
				if err := c.Do(ctx, "CLIENT", "KILL", "ID", id).Err(); err != nil {
					t.Fatalf("redistest: drop subscriber %s: %v", id, err)
				}
				n++
			}
		}
	}
	return n
}
