package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
)

// TestApplyTellsDeletionToItsOwnerOnly: a deleted session's tombstone answers "deleted" only to
// the owner serving it at its deletion; an owner taken over before is told of the take-over
// (fresh or not), as it was before the deletion.
func TestApplyTellsDeletionToItsOwnerOnly(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	st := New(rdb, "del:", nil)
	if err := st.Create(ctx, Session{ID: "s1", KeyID: "k", Kind: "rest", Created: time.Now()}, time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		owner string
		fresh bool
	}{{"a", false}, {"b", true}, {"c", false}} {
		if _, err := st.Claim(ctx, "s1", "k", c.owner, time.Minute, c.fresh); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := st.Delete(ctx, "s1", "other"); ok || err != nil {
		t.Fatalf("another key's delete: %v %v", ok, err)
	}
	if ok, err := st.Delete(ctx, "s1", "k"); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if err := st.Apply(ctx, "s1", "c", time.Minute, Update{Used: 1}); !errors.Is(err, ErrDeleted) {
		t.Fatalf("c, the owner at deletion: %v, want ErrDeleted", err)
	}
	if err := st.Apply(ctx, "s1", "a", time.Minute, Update{Used: 1}); !errors.Is(err, ErrTakenOverFresh) {
		t.Fatalf("a, claimed fresh from before the deletion: %v, want ErrTakenOverFresh", err)
	}
	if err := st.Apply(ctx, "s1", "b", time.Minute, Update{Used: 1}); !errors.Is(err, ErrTakenOver) || errors.Is(err, ErrTakenOverFresh) {
		t.Fatalf("b, taken over resuming before the deletion: %v, want ErrTakenOver", err)
	}
	if ok, err := st.Delete(ctx, "s1", "k"); ok || err != nil {
		t.Fatalf("second delete: %v %v", ok, err)
	}
}
