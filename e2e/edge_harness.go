package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/edge"
)

// edgeConfig is what the edge's account administration needs: the platform database and, when
// reachable, its Redis (so revokes reach every edge replica at once).
func (p *Platform) edgeConfig(t testing.TB) edge.Config {
	t.Helper()
	if p.DBURL == "" {
		t.Skip("the platform database is not reachable from the test (set CHAININTEL_E2E_DATABASE_URL)")
	}
	var cfg edge.Config
	cfg.DatabaseURL = p.DBURL
	if p.Stack != nil {
		cfg.Redis.URL = p.Stack.RedisURL
	}
	return cfg
}

// NewKey creates a fresh org (or, for role "individual", none), a user with role
// (org_admin|org_member|individual) and a key on tier, and returns the raw key. It skips the
// test when the platform database is not reachable.
func (p *Platform) NewKey(t testing.TB, tier, role string) string {
	t.Helper()
	raw, _ := p.NewAccountKey(t, edge.KeySpec{Tier: tier, Role: role})
	return raw
}

// NewAccountKey creates a key per spec (see edge.KeySpec: empty org/user fields create fresh
// ones) and returns the raw key and its id.
func (p *Platform) NewAccountKey(t testing.TB, spec edge.KeySpec) (raw, keyID string) {
	t.Helper()
	cfg := p.edgeConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, keyID, err := edge.CreateKey(ctx, cfg, spec)
	if err != nil {
		t.Fatalf("create key: %v", err)
	}
	return raw, keyID
}

// RevokeKey revokes a key given its raw value.
func (p *Platform) RevokeKey(t testing.TB, raw string) {
	t.Helper()
	cfg := p.edgeConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := edge.RevokeKey(ctx, cfg, "", raw); err != nil {
		t.Fatalf("revoke key: %v", err)
	}
}
