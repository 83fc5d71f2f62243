package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	libconfig "github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/edge"
	"github.com/chainintel/chainintel/services/edge/internal/keys"
	"github.com/redis/go-redis/v9"
)

// edgeListening subscribes to key invalidations on the Redis at addr, as a running edge does,
// until the test ends.
func edgeListening(t *testing.T, addr string) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rdb.Close() })
	ps := rdb.Subscribe(context.Background(), keys.InvalidateChannel)
	if _, err := ps.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ps.Close() })
}

// A revoke that running edges may not hear fails with a non-zero exit and says what to do, after
// revoking in the database: Redis not configured, or a Redis no edge listens on (an operator
// pointing the command at another Redis than the edges'). With an edge listening it succeeds.
func TestRevokeFailsLoudlyWhenEdgesCannotHear(t *testing.T) {
	ctx := context.Background()
	var cfg edge.Config
	if err := libconfig.Defaults(&cfg); err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = pgtest.URL(t)
	m := miniredis.RunT(t) // a Redis of this test's own: nothing else subscribes to it
	cfg.Redis.URL = "redis://" + m.Addr() + "/0"
	raw, keyID, err := edge.CreateKey(ctx, cfg, edge.KeySpec{Tier: "free"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = admin(ctx, cfg, []string{"revoke", "--key", keyID}, &out)
	if !errors.Is(err, edge.ErrEdgesNotNotified) || !strings.Contains(err.Error(), "no edge listens for invalidations on the Redis at "+m.Addr()) ||
		!strings.Contains(err.Error(), "set EDGE_REDIS_URL to the edges' Redis") || out.Len() != 0 {
		t.Fatalf("revoke with no edge listening: %v (printed %q)", err, out.String())
	}
	a, err := edge.OpenAdmin(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ks, err := a.ListKeys(ctx, "", "")
	revoked := false
	for _, k := range ks {
		revoked = revoked || (k.ID == keyID && k.RevokedAt != nil)
	}
	if err != nil || !revoked {
		t.Fatalf("the database keeps the revoke: %+v %v", ks, err)
	}

	// No Redis configured (the library entry point allows it for creating and listing).
	noRedis := cfg
	noRedis.Redis.URL = ""
	if err := edge.RevokeKey(ctx, noRedis, "", raw); !errors.Is(err, edge.ErrEdgesNotNotified) || !strings.Contains(err.Error(), "no Redis is configured") {
		t.Fatalf("revoke without Redis: %v", err)
	}

	// An edge listening: the same command succeeds (revoking again is harmless).
	edgeListening(t, m.Addr())
	out.Reset()
	if err := admin(ctx, cfg, []string{"revoke", "--key", keyID}, &out); err != nil || !strings.Contains(out.String(), keyID) {
		t.Fatalf("revoke with an edge listening: %v %s", err, out.String())
	}
}
