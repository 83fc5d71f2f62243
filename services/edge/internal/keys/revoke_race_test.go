package keys_test

import (
	"context"
	"crypto/rand"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/edge/internal/keys"
)

// slowStore is a key store whose first lookup reads the key as valid, then blocks until
// released; every later lookup sees the key as the database does after revoked is set.
type slowStore struct {
	id      httpx.Identity
	lookups atomic.Int64
	started chan struct{}
	release chan struct{}
	revoked atomic.Bool
}

func (s *slowStore) Lookup(ctx context.Context, _ [32]byte) (httpx.Identity, error) {
	if s.lookups.Add(1) == 1 {
		id := s.id // read before the revoke commits
		close(s.started)
		<-s.release
		return id, nil
	}
	if s.revoked.Load() {
		return httpx.Identity{}, keys.ErrInvalid
	}
	return s.id, nil
}

// A lookup that read the key as valid before its revoke, and answers after the revoke's
// invalidation, must not leave that answer cached in Redis or in process: the next verification,
// on this replica and on another, refuses the key. TTLs of an hour separate "invalidated" from
// "expired".
func TestRevokeDuringLookup(t *testing.T) {
	ctx := context.Background()
	rdb, _ := redistest.Client(t)
	ns := "test:" + rand.Text() + ":"
	st := &slowStore{
		id:      httpx.Identity{KeyID: "k1", UserID: "u1", Role: httpx.RoleIndividual, Tier: "basic"},
		started: make(chan struct{}),
		release: make(chan struct{}),
	}
	opts := keys.VerifierOptions{LocalTTL: time.Hour, RedisTTL: time.Hour, Redis: rdb, Namespace: ns}
	v := keys.NewVerifier(st, opts)
	const raw = "ci_test_revoke_during_lookup"
	type answer struct {
		id  httpx.Identity
		err error
	}
	inFlight := make(chan answer)
	go func() {
		id, err := v.Verify(ctx, raw)
		inFlight <- answer{id, err}
	}()
	<-st.started

	// The revoke: the database first, then the invalidation (Redis, and every replica's process,
	// as the verifier's subscription would on the message).
	st.revoked.Store(true)
	if err := keys.InvalidateIn(ctx, rdb, ns, keys.Hash(raw)); err != nil {
		t.Fatal(err)
	}
	v.Forget(keys.Hash(raw))
	close(st.release)
	if a := <-inFlight; a.err != nil || a.id != st.id {
		t.Fatalf("the verification under way answered %+v %v, want what it read: %+v", a.id, a.err, st.id)
	}

	if _, err := v.Verify(ctx, raw); !errors.Is(err, keys.ErrInvalid) {
		t.Fatalf("this replica after the revoke: %v, want ErrInvalid", err)
	}
	other := keys.NewVerifier(st, opts) // nothing in process: Redis, then the store
	if _, err := other.Verify(ctx, raw); !errors.Is(err, keys.ErrInvalid) {
		t.Fatalf("another replica after the revoke: %v, want ErrInvalid", err)
	}
}
