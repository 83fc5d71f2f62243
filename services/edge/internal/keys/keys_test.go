package keys_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/edge/internal/keys"
	"github.com/chainintel/chainintel/services/edge/keyevents"
	"github.com/chainintel/chainintel/services/edge/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

func TestAccountsAndKeys(t *testing.T) {
	ctx := context.Background()
	s := keys.NewStore(pgtest.Pool(t))

	org, err := s.CreateOrg(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := s.CreateUser(ctx, org.ID, "admin@acme.test", httpx.RoleOrgAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(ctx, org.ID, "admin@acme.test", httpx.RoleOrgMember); !errors.Is(err, keys.ErrExists) {
		t.Fatalf("duplicate email: %v", err)
	}
	if _, err := s.CreateUser(ctx, "", "x@acme.test", httpx.RoleOrgMember); err == nil {
		t.Fatal("org member without org accepted")
	}
	if _, err := s.CreateUser(ctx, org.ID, "y@acme.test", httpx.RoleIndividual); err == nil {
		t.Fatal("individual with an org accepted")
	}
	if _, err := s.CreateUser(ctx, "00000000-0000-0000-0000-000000000000", "z@acme.test", httpx.RoleOrgMember); !errors.Is(err, keys.ErrNotFound) {
		t.Fatalf("unknown org: %v", err)
	}
	solo, err := s.CreateUser(ctx, "", "solo@example.test", httpx.RoleIndividual)
	if err != nil {
		t.Fatal(err)
	}

	raw, k, err := s.CreateKey(ctx, admin.ID, "ci", "basic")
	if err != nil {
		t.Fatal(err)
	}
	if k.OrgID != org.ID || k.Role != httpx.RoleOrgAdmin || k.Tier != "basic" || k.Prefix != keys.DisplayPrefix(raw) || len(raw) < 40 {
		t.Fatalf("key info: %+v (raw %q)", k, raw)
	}
	id, err := s.Lookup(ctx, keys.Hash(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := httpx.Identity{KeyID: k.ID, UserID: admin.ID, OrgID: org.ID, Role: httpx.RoleOrgAdmin, Tier: "basic"}
	if id != want {
		t.Fatalf("lookup: %+v, want %+v", id, want)
	}
	soloRaw, soloKey, err := s.CreateKey(ctx, solo.ID, "", "pro")
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := s.Lookup(ctx, keys.Hash(soloRaw)); id.OrgID != "" || id.Role != httpx.RoleIndividual || id.Tier != "pro" {
		t.Fatalf("individual: %+v", id)
	}

	// Only the hash is stored.
	var n int
	if err := pgtest.Pool(t).QueryRow(ctx, `SELECT count(*) FROM edge.api_keys WHERE prefix = $1 AND key_hash = $2`, k.Prefix, hashBytes(raw)).Scan(&n); err != nil || n != 1 {
		t.Fatalf("stored key: %d %v", n, err)
	}

	if _, err := s.SetTier(ctx, "", org.ID, "api"); err != nil {
		t.Fatal(err)
	}
	if id, _ := s.Lookup(ctx, keys.Hash(raw)); id.Tier != "api" {
		t.Fatalf("tier after set: %+v", id)
	}
	if id, _ := s.Lookup(ctx, keys.Hash(soloRaw)); id.Tier != "pro" {
		t.Fatalf("other key's tier changed: %+v", id)
	}

	list, err := s.ListKeys(ctx, org.ID, "")
	if err != nil || len(list) != 1 || list[0].ID != k.ID {
		t.Fatalf("list org keys: %+v %v", list, err)
	}
	if _, err := s.Revoke(ctx, soloKey.ID, [32]byte{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(ctx, keys.Hash(soloRaw)); !errors.Is(err, keys.ErrInvalid) {
		t.Fatalf("revoked key: %v", err)
	}
	if _, err := s.Revoke(ctx, "", keys.Hash(raw)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(ctx, keys.Hash(raw)); !errors.Is(err, keys.ErrInvalid) {
		t.Fatalf("revoked key by hash: %v", err)
	}
	if _, err := s.Revoke(ctx, "00000000-0000-0000-0000-000000000000", [32]byte{}); !errors.Is(err, keys.ErrNotFound) {
		t.Fatalf("revoke unknown: %v", err)
	}
}

// A revoke on one replica is refused on another that shares Redis, even with an hour-long
// cache TTL: only the invalidation over pub/sub can explain the refusal. The test owns its
// namespace (channel and keys), so verifiers of other tests on the same server do not count.
func TestRevokeReachesEveryReplica(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := keys.NewStore(pgtest.Pool(t))
	rdb, _ := redistest.Client(t)
	org, _ := s.CreateOrg(ctx, "replicas")
	u, err := s.CreateUser(ctx, org.ID, "r@replicas.test", httpx.RoleOrgMember)
	if err != nil {
		t.Fatal(err)
	}
	raw, k, err := s.CreateKey(ctx, u.ID, "", "basic")
	if err != nil {
		t.Fatal(err)
	}
	ns := "test:" + rand.Text() + ":"
	channel := keys.Channel(ns)
	// Long local TTL so only the pub/sub message can explain a refusal.
	opts := keys.VerifierOptions{LocalTTL: time.Hour, RedisTTL: time.Hour, Redis: rdb, Namespace: ns}
	a, b := keys.NewVerifier(s, opts), keys.NewVerifier(s, opts)
	var wg sync.WaitGroup
	for _, v := range []*keys.Verifier{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); _ = v.Listen(ctx) }()
	}
	defer wg.Wait()
	defer cancel()
	for _, v := range []*keys.Verifier{a, b} {
		if id, err := v.Verify(ctx, raw); err != nil || id.KeyID != k.ID {
			t.Fatalf("verify before revoke: %+v %v", id, err)
		}
	}
	// The subscriptions are asynchronous; wait until both are live on this test's channel.
	waitFor(t, "both verifiers subscribed", func() bool {
		n, err := rdb.PubSubNumSub(ctx, channel).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n[channel] == 2
	})

	h, err := s.Revoke(ctx, k.ID, [32]byte{})
	if err != nil {
		t.Fatal(err)
	}
	before := rdb.Time(ctx).Val()
	if err := keys.InvalidateIn(ctx, rdb, ns, h); err != nil {
		t.Fatal(err)
	}
	after := rdb.Time(ctx).Val()
	for i, v := range []*keys.Verifier{a, b} {
		waitFor(t, fmt.Sprintf("verifier %d refuses the revoked key", i), func() bool {
			_, err := v.Verify(ctx, raw)
			return errors.Is(err, keys.ErrInvalid)
		})
	}
	// The revoke is recorded for followers that were not subscribed (stream-fanout).
	// It is timed by the Redis server's clock, the one stream-fanout times its admissions by.
	recent, _, err := keyevents.Recent(ctx, rdb, channel, time.Now().Add(-time.Minute))
	at, ok := recent[hex.EncodeToString(h[:])]
	if err != nil || !ok || len(recent) != 1 {
		t.Fatalf("recorded invalidations %v %v, want the revoked key's", recent, err)
	}
	if at.Before(before.Truncate(time.Millisecond)) || at.After(after) {
		t.Fatalf("recorded at %s, want by the Redis server's clock, within [%s, %s]", at, before, after)
	}
	if keys.Channel("") != keyevents.DefaultChannel {
		t.Fatalf("the edge's channel %q is not keyevents' %q", keys.Channel(""), keyevents.DefaultChannel)
	}
}

// waitFor polls cond until it holds. The bound only keeps a broken build from hanging; it is
// no performance claim (an hour-long TTL separates "invalidated" from "expired").
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The verifier answers from Redis when the database is not consulted, and keeps answering from
// the database when Redis is gone.
func TestVerifierCacheLayers(t *testing.T) {
	ctx := context.Background()
	s := keys.NewStore(pgtest.Pool(t))
	rdb, _ := redistest.Client(t)
	u, err := s.CreateUser(ctx, "", "layers@example.test", httpx.RoleIndividual)
	if err != nil {
		t.Fatal(err)
	}
	raw, k, err := s.CreateKey(ctx, u.ID, "", "basic")
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingStore{Lookuper: s}
	// Redis answers however slowly (the default 100 ms bound would send a loaded machine's
	// reads to the database, which is what this test counts).
	v1 := keys.NewVerifier(counting, keys.VerifierOptions{LocalTTL: time.Millisecond, Redis: rdb, RedisTimeout: time.Minute})
	if _, err := v1.Verify(ctx, raw); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	v2 := keys.NewVerifier(counting, keys.VerifierOptions{Redis: rdb, RedisTimeout: time.Minute})
	id, err := v2.Verify(ctx, raw)
	if err != nil || id.KeyID != k.ID || id.Tier != "basic" || id.Role != httpx.RoleIndividual {
		t.Fatalf("from redis: %+v %v", id, err)
	}
	if counting.n != 1 {
		t.Fatalf("database lookups: %d, want 1 (second verifier should read Redis)", counting.n)
	}
	if _, err := v2.Verify(ctx, "ci_not-a-key"); !errors.Is(err, keys.ErrInvalid) {
		t.Fatalf("bad key: %v", err)
	}

	// Redis gone: the database answers.
	dead := keys.NewVerifier(s, keys.VerifierOptions{Redis: deadRedis(t)})
	if id, err := dead.Verify(ctx, raw); err != nil || id.KeyID != k.ID {
		t.Fatalf("without redis: %+v %v", id, err)
	}
}

type countingStore struct {
	keys.Lookuper
	mu sync.Mutex
	n  int
}

func (c *countingStore) Lookup(ctx context.Context, h [32]byte) (httpx.Identity, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.Lookuper.Lookup(ctx, h)
}

// SeedDevKey: a key seeded with revokeEarlier (the local stack's random key of each start)
// leaves the dev user's earlier seeded keys revoked, not the keys made for the dev user
// otherwise; a key seeded without it (a fixed CHAININTEL_DEV_API_KEY) leaves the others alone
// and is re-enabled when it was revoked.
func TestSeedDevKeyRevokesEarlierRandomKeys(t *testing.T) {
	ctx := context.Background()
	s := keys.NewStore(pgtest.Pool(t))
	valid := func(raw string) bool {
		t.Helper()
		_, err := s.Lookup(ctx, keys.Hash(raw))
		if err != nil && !errors.Is(err, keys.ErrInvalid) {
			t.Fatal(err)
		}
		return err == nil
	}
	seed := func(raw string, revokeEarlier bool) httpx.Identity {
		t.Helper()
		id, err := s.SeedDevKey(ctx, raw, "api", revokeEarlier)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	first, second, fixed := "dev-first-0123456789abcdef", "dev-second-0123456789abcdef", "dev-fixed-0123456789abcdef"
	id := seed(first, true)
	own, _, err := s.CreateKey(ctx, id.UserID, "ci", "basic")
	if err != nil {
		t.Fatal(err)
	}
	seed(second, true)
	if valid(first) || !valid(second) || !valid(own) {
		t.Fatalf("after a second random key: first %v, second %v, own key %v; want false, true, true", valid(first), valid(second), valid(own))
	}
	seed(fixed, false)
	if !valid(second) || !valid(fixed) {
		t.Fatalf("a fixed key revoked the random one (%v) or is not valid (%v)", valid(second), valid(fixed))
	}
	if _, err := s.Revoke(ctx, "", keys.Hash(fixed)); err != nil {
		t.Fatal(err)
	}
	seed(fixed, false)
	if !valid(fixed) {
		t.Fatal("a revoked fixed dev key is not re-enabled by seeding it again")
	}
}
