package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
)

// TestApplyTellsFreshTakeOver: an owner whose session another connection claimed fresh (started
// at the topic's end, sending nothing of what the owner delivered since its last save again) is
// told so by its refused save (ErrTakenOverFresh, still an ErrTakenOver), unlike an owner taken
// over by a resuming claim; the mark is the owner's alone, and its own next claim clears it.
func TestApplyTellsFreshTakeOver(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	st := New(rdb, "fr:", nil)
	if err := st.Create(ctx, Session{ID: "s1", KeyID: "k", Kind: "rest", Created: time.Now()}, time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	claim := func(owner string, fresh bool) {
		t.Helper()
		if _, err := st.Claim(ctx, "s1", "k", owner, time.Minute, fresh); err != nil {
			t.Fatal(err)
		}
	}
	claim("a", false)
	claim("b", true) // fresh over a
	claim("c", false)
	if err := st.Apply(ctx, "s1", "a", time.Minute, Update{Used: 1}); !errors.Is(err, ErrTakenOverFresh) || !errors.Is(err, ErrTakenOver) {
		t.Fatalf("a, claimed fresh from: %v, want ErrTakenOverFresh", err)
	}
	if err := st.Apply(ctx, "s1", "b", time.Minute, Update{Used: 1}); !errors.Is(err, ErrTakenOver) || errors.Is(err, ErrTakenOverFresh) {
		t.Fatalf("b, taken over by a resuming claim: %v, want ErrTakenOver", err)
	}
	claim("a", true) // fresh over c; a's own claim drops its mark
	if err := st.Apply(ctx, "s1", "a", time.Minute, Update{Used: 1}); err != nil {
		t.Fatalf("a, owner again: %v", err)
	}
	if err := st.Apply(ctx, "s1", "c", time.Minute, Update{Used: 1}); !errors.Is(err, ErrTakenOverFresh) {
		t.Fatalf("c, claimed fresh from: %v, want ErrTakenOverFresh", err)
	}
	claim("c", false)
	claim("a", false)
	if err := st.Apply(ctx, "s1", "c", time.Minute, Update{Used: 1}); errors.Is(err, ErrTakenOverFresh) || !errors.Is(err, ErrTakenOver) {
		t.Fatalf("c, owner again and then taken over resuming: %v, want ErrTakenOver", err)
	}
}
