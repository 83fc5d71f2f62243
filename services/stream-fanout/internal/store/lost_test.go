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
	if err := st.Create(ctx, ss, time.Minute); err != nil {
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
