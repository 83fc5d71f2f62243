package keys_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge/internal/keys"
)

// oneKey is a store knowing one key, counting the lookups of it.
type oneKey struct {
	h       [32]byte
	lookups atomic.Int64
}

func (s *oneKey) Lookup(_ context.Context, h [32]byte) (httpx.Identity, error) {
	if h != s.h {
		return httpx.Identity{}, keys.ErrInvalid
	}
	s.lookups.Add(1)
	return httpx.Identity{KeyID: "k", UserID: "u", Tier: "free"}, nil
}

// Made-up keys, more than the verifier keeps, do not evict a valid key's identity: they are kept
// apart, so its callers still verify from memory and not from Redis and the database.
func TestMadeUpKeysDoNotEvictValidOnes(t *testing.T) {
	st := &oneKey{h: keys.Hash("ci_valid")}
	v := keys.NewVerifier(st, keys.VerifierOptions{LocalTTL: time.Hour})
	ctx := context.Background()
	if _, err := v.Verify(ctx, "ci_valid"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 150_000; i++ {
		if _, err := v.Verify(ctx, fmt.Sprintf("ci_made_up_%d", i)); !errors.Is(err, keys.ErrInvalid) {
			t.Fatalf("made-up key %d: %v, want ErrInvalid", i, err)
		}
	}
	if id, ok, err := v.Cached("ci_valid"); !ok || err != nil || id.KeyID != "k" {
		t.Fatalf("valid key cached %v %v %+v after the made-up ones, want its identity", ok, err, id)
	}
	if _, err := v.Verify(ctx, "ci_valid"); err != nil || st.lookups.Load() != 1 {
		t.Fatalf("valid key: %v after %d lookups, want one lookup in all", err, st.lookups.Load())
	}
	if _, ok, err := v.Cached("ci_made_up_149999"); !ok || !errors.Is(err, keys.ErrInvalid) {
		t.Fatalf("a recent made-up key cached %v %v, want ErrInvalid", ok, err)
	}
}
