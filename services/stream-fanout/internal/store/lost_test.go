package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
)

// TestApplyTellsLostFromTakenAndDeleted: an owner's update finds the session owned by another
// connection (ErrTakenOver), deleted (ErrDeleted, from the tombstone Delete leaves; Restore is
// not consulted), or missing without a deletion: then the owner's copy is stored again, owned by
// it and listed under its key, and the update applied to it (ErrLost without a copy).
func TestApplyTellsLostFromTakenAndDeleted(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	st := New(rdb, "lt:", nil)
	created := time.UnixMilli(1_700_000_000_000).UTC()
	ss := Session{ID: "s1", KeyID: "k", UserID: "u", Kind: "ws", Created: created, Owner: "a",
		Filters: []FilterRec{{ID: "f1", Raw: []byte(`{"to":["binance"]}`)}}, Cursor: map[int]int64{0: 5}, HasCursor: true}
	if err := st.Create(ctx, ss, time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	if err := st.Apply(ctx, "s1", "b", time.Minute, Update{Used: 1}); !errors.Is(err, ErrTakenOver) {
		t.Fatalf("another owner's update: %v, want ErrTakenOver", err)
	}

	rdb.Del(ctx, st.skey("s1"), st.kkey("k"))
	if err := st.Apply(ctx, "s1", "a", time.Minute, Update{Used: 1}); !errors.Is(err, ErrLost) {
		t.Fatalf("update of a lost session without a copy: %v, want ErrLost", err)
	}
	restored := 0
	copyOf := func() (Session, bool) { restored++; return ss, true }
	if err := st.Apply(ctx, "s1", "a", time.Minute, Update{Cursor: map[int]int64{0: 9}, Used: 2, Restore: copyOf}); err != nil {
		t.Fatalf("update of a lost session with its copy: %v", err)
	}
	got, err := st.Get(ctx, "s1", "k")
	if err != nil {
		t.Fatal(err)
	}
	want := Session{ID: "s1", KeyID: "k", UserID: "u", Kind: "ws", Created: created, LastSeen: got.LastSeen, Used: 2, Owner: "a",
		Filters: ss.Filters, Cursor: map[int]int64{0: 9}, HasCursor: true}
	if restored != 1 || !reflect.DeepEqual(got, want) {
		t.Fatalf("restored %d times: %+v\nwant %+v", restored, got, want)
	}
	if list, err := st.List(ctx, "k"); err != nil || len(list) != 1 {
		t.Fatalf("listed %d sessions (%v), want the restored one", len(list), err)
	}

	if ok, err := st.Delete(ctx, "s1", "k"); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if err := st.Apply(ctx, "s1", "a", time.Minute, Update{Used: 1, Restore: copyOf}); !errors.Is(err, ErrDeleted) {
		t.Fatalf("update of a deleted session: %v, want ErrDeleted", err)
	}
	if restored != 1 || rdb.Exists(ctx, st.skey("s1")).Val() != 0 {
		t.Fatal("a deleted session was stored again")
	}
}

// TestRestoreKeepsUsedAndTheCap: a lost session stored again keeps the transfers its owner
// last saved as charged (the update's own are added to them), and is not stored again while
// its key has as many live sessions as the cap allows: the key stays within the cap its
// creates are refused at, and the owner is told (ErrSessionCap). The ids of expired sessions
// in the key's set do not count.
func TestRestoreKeepsUsedAndTheCap(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	st := New(rdb, "lc:", nil)
	created := time.UnixMilli(1_700_000_000_000).UTC()
	ss := Session{ID: "s1", KeyID: "k", UserID: "u", Kind: "rest", Created: created, Owner: "a", Used: 40,
		Filters: []FilterRec{{ID: "f1", Raw: []byte(`{"to":["binance"]}`)}}, Cursor: map[int]int64{0: 5}, HasCursor: true}
	copyOf := func() (Session, bool) { return ss, true }
	for _, id := range []string{"o1", "o2"} {
		if err := st.Create(ctx, Session{ID: id, KeyID: "k", Kind: "rest", Created: created}, time.Minute, 0); err != nil {
			t.Fatal(err)
		}
	}
	rdb.SAdd(ctx, st.kkey("k"), "expired")

	// Two live sessions besides it, cap 2: not stored again.
	err := st.Apply(ctx, "s1", "a", time.Minute, Update{Cursor: map[int]int64{0: 9}, Used: 2, Restore: copyOf, SessionCap: 2})
	if !errors.Is(err, ErrSessionCap) {
		t.Fatalf("restore over the cap: %v, want ErrSessionCap", err)
	}
	if rdb.Exists(ctx, st.skey("s1")).Val() != 0 {
		t.Fatal("a session over the key's cap was stored again")
	}
	if n, err := st.Live(ctx, "k"); err != nil || n != 2 {
		t.Fatalf("the key has %d live sessions (%v), want 2", n, err)
	}

	// One deleted: under the cap, stored again with the count its owner saved plus the update's.
	if ok, err := st.Delete(ctx, "o2", "k"); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if err := st.Apply(ctx, "s1", "a", time.Minute, Update{Cursor: map[int]int64{0: 9}, Used: 2, Restore: copyOf, SessionCap: 2}); err != nil {
		t.Fatalf("restore under the cap: %v", err)
	}
	got, err := st.Get(ctx, "s1", "k")
	if err != nil {
		t.Fatal(err)
	}
	if got.Used != 42 {
		t.Fatalf("transfersUsed after the restore %d, want 42 (40 saved before the loss, 2 since)", got.Used)
	}
	if n, err := st.Live(ctx, "k"); err != nil || n != 2 {
		t.Fatalf("the key has %d live sessions (%v), want 2", n, err)
	}
	if rdb.SIsMember(ctx, st.kkey("k"), "expired").Val() {
		t.Fatal("an expired id was left in the key's set")
	}
}

// TestRestoreOfAWSSessionHasNoCap: a session made by a subscribe message is stored again
// although its key is at its cap of live sessions and v2 streams, as a reconnect to it is taken.
func TestRestoreOfAWSSessionHasNoCap(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	st := New(rdb, "lw:", nil)
	if err := st.Create(ctx, Session{ID: "r1", KeyID: "k", Kind: "rest"}, time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	ss := Session{ID: "w1", KeyID: "k", Kind: "ws", Owner: "a", Used: 7}
	err := st.Apply(ctx, "w1", "a", time.Minute, Update{Used: 1, Restore: func() (Session, bool) { return ss, true }, SessionCap: 1})
	if err != nil {
		t.Fatalf("restore of a ws session at the cap: %v, want it stored again", err)
	}
	if got, err := st.Get(ctx, "w1", "k"); err != nil || got.Used != 8 {
		t.Fatalf("restored ws session: %+v %v, want transfersUsed 8", got, err)
	}
}

// TestPruneKeepsARestoredSession: List and Live drop from a key's set the ids whose session
// they found missing, but not one a connection stored again since they looked (restoreScript
// adds it to the set before the prune would remove it): it stays counted against the cap and
// listed.
func TestPruneKeepsARestoredSession(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	st := New(rdb, "lp:", nil)
	if err := st.Create(ctx, Session{ID: "back", KeyID: "k", Kind: "ws"}, time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	rdb.SAdd(ctx, st.kkey("k"), "gone")
	// Both were found missing by a List that read the set before "back" was stored again.
	st.prune(ctx, "k", []any{"back", "gone"})
	if got := rdb.SMembers(ctx, st.kkey("k")).Val(); !reflect.DeepEqual(got, []string{"back"}) {
		t.Fatalf("key set after the prune %v, want [back]", got)
	}
}
