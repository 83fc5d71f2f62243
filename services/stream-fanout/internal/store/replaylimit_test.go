package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
)

// owedMsgs returns n messages of size bytes each, numbered, with block times base+i seconds.
func owedMsgs(n, size int, base int64) ([][]byte, []int64) {
	msgs, times := make([][]byte, n), make([]int64, n)
	for i := range msgs {
		head := fmt.Sprintf("m%03d:", i)
		msgs[i] = []byte(head + strings.Repeat("x", size-len(head)))
		times[i] = base + int64(i)*1000
	}
	return msgs, times
}

func createOwned(t *testing.T, st *Store, id, key string) {
	t.Helper()
	ss := Session{ID: id, KeyID: key, Kind: "ws", Created: time.Now(), Owner: "a", Cursor: map[int]int64{0: 1}, HasCursor: true}
	if err := st.Create(context.Background(), ss, time.Minute, 0); err != nil {
		t.Fatal(err)
	}
}

// TestReplayLimits: a save keeps the oldest messages owed that fit the session's limit and the
// key's, in order, and records the rest (count, first and last block time) for the session's
// next claim, which hands both over; the key's limit counts its other sessions' buffers until
// they are claimed; a claimed session handed back keeps what its claim took.
func TestReplayLimits(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	st := New(rdb, fmt.Sprintf("rl%d:", time.Now().UnixNano()), nil, ReplayLimits(1000, 1500))
	base := int64(1_700_000_000_000)

	createOwned(t, st, "s1", "k")
	msgs, times := owedMsgs(15, 100, base)
	var told int64
	u := Update{Release: true, Replay: msgs, ReplayTimes: times, OnDropped: func(n int64) { told += n }}
	if err := st.Apply(ctx, "s1", "a", time.Minute, u); err != nil {
		t.Fatal(err)
	}
	if told != 5 {
		t.Fatalf("told %d dropped, want 5", told)
	}

	// The key has 500 bytes left: the second session keeps five of its ten.
	createOwned(t, st, "s2", "k")
	msgs2, times2 := owedMsgs(10, 100, base+100_000)
	if err := st.Apply(ctx, "s2", "a", time.Minute, Update{Release: true, Replay: msgs2, ReplayTimes: times2}); err != nil {
		t.Fatal(err)
	}
	// Another key is not concerned.
	createOwned(t, st, "s3", "other")
	if err := st.Apply(ctx, "s3", "a", time.Minute, Update{Release: true, Replay: msgs2, ReplayTimes: times2}); err != nil {
		t.Fatal(err)
	}

	got, err := st.Claim(ctx, "s1", "k", "b", time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Replay, msgs[:10]) {
		t.Fatalf("s1 replays %d messages, want the first 10", len(got.Replay))
	}
	want := &Dropped{Count: 5, FirstMs: times[10], LastMs: times[14]}
	if !reflect.DeepEqual(got.Dropped, want) {
		t.Fatalf("s1 dropped %+v, want %+v", got.Dropped, want)
	}
	got2, err := st.Claim(ctx, "s2", "k", "b", time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got2.Replay, msgs2[:5]) || !reflect.DeepEqual(got2.Dropped, &Dropped{Count: 5, FirstMs: times2[5], LastMs: times2[9]}) {
		t.Fatalf("s2 replays %d, dropped %+v; want 5 and the last 5", len(got2.Replay), got2.Dropped)
	}
	got3, err := st.Claim(ctx, "s3", "other", "b", time.Minute, false)
	if err != nil || len(got3.Replay) != 10 || got3.Dropped != nil {
		t.Fatalf("another key's session replays %d, dropped %+v (%v); want all 10", len(got3.Replay), got3.Dropped, err)
	}

	// Claimed, both buffers left the key's total. s1 handed back with what its claim took and 3
	// more messages owed keeps the 10 its own limit allows; the 3 add to the drops its claim took.
	extra, extraTimes := owedMsgs(3, 100, base-50_000)
	back := Update{Release: true, Replay: append(got.Replay, extra...), ReplayTimes: append(times[:10:10], extraTimes...), Dropped: got.Dropped}
	if err := st.Apply(ctx, "s1", "b", time.Minute, back); err != nil {
		t.Fatal(err)
	}
	again, err := st.Claim(ctx, "s1", "k", "c", time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	want = &Dropped{Count: 8, FirstMs: extraTimes[0], LastMs: times[14]}
	if !reflect.DeepEqual(again.Replay, msgs[:10]) || !reflect.DeepEqual(again.Dropped, want) {
		t.Fatalf("handed back: replays %d, dropped %+v; want 10 and %+v", len(again.Replay), again.Dropped, want)
	}
	// The claim handed the drops over: the next claim has none.
	if err := st.Apply(ctx, "s1", "c", time.Minute, Update{Release: true}); err != nil {
		t.Fatal(err)
	}
	if last, err := st.Claim(ctx, "s1", "k", "d", time.Minute, false); err != nil || last.Dropped != nil || len(last.Replay) != 0 {
		t.Fatalf("a second claim: dropped %+v, %d replayed (%v); want nothing", last.Dropped, len(last.Replay), err)
	}
}

// TestReplayUnlimited: without limits every message is kept and nothing is recorded dropped.
func TestReplayUnlimited(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	st := New(rdb, fmt.Sprintf("ru%d:", time.Now().UnixNano()), nil)
	createOwned(t, st, "s1", "k")
	msgs, times := owedMsgs(50, 1000, 0)
	if err := st.Apply(ctx, "s1", "a", time.Minute, Update{Release: true, Replay: msgs, ReplayTimes: times}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Claim(ctx, "s1", "k", "b", time.Minute, false)
	if err != nil || !reflect.DeepEqual(got.Replay, msgs) || got.Dropped != nil {
		t.Fatalf("replays %d, dropped %+v (%v); want all 50", len(got.Replay), got.Dropped, err)
	}
}

// TestReplayOverTheLimitKeepsNothing: a key already over its limit (the limit lowered, or
// another replica's higher one) keeps nothing more: every message of a save is dropped.
func TestReplayOverTheLimitKeepsNothing(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	prefix := fmt.Sprintf("ro%d:", time.Now().UnixNano())
	wide, narrow := New(rdb, prefix, nil, ReplayLimits(0, 2000)), New(rdb, prefix, nil, ReplayLimits(0, 1000))
	createOwned(t, wide, "s1", "k")
	msgs, times := owedMsgs(15, 100, 0)
	if err := wide.Apply(ctx, "s1", "a", time.Minute, Update{Release: true, Replay: msgs, ReplayTimes: times}); err != nil {
		t.Fatal(err)
	}
	createOwned(t, narrow, "s2", "k")
	var dropped int64
	if err := narrow.Apply(ctx, "s2", "a", time.Minute, Update{Release: true, Replay: msgs[:5], ReplayTimes: times[:5], OnDropped: func(n int64) { dropped = n }}); err != nil {
		t.Fatal(err)
	}
	got, err := narrow.Claim(ctx, "s2", "k", "b", time.Minute, false)
	if err != nil || len(got.Replay) != 0 || dropped != 5 || got.Dropped == nil || got.Dropped.Count != 5 {
		t.Fatalf("a key over its limit kept %d, dropped %d (%+v, %v); want none kept, 5 dropped", len(got.Replay), dropped, got.Dropped, err)
	}
}
