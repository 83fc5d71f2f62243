package app_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	"github.com/chainintel/chainintel/services/transfers/internal/events"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// labels is a user-labels stand-in: each caller's label names by AddressRef.Key(), and a count
// of the addresses it was asked about. hold, when set, is waited on inside Lookup.
type labels struct {
	mu    sync.Mutex
	names map[string]map[string]string
	asked int
	hold  chan struct{}
}

func (l *labels) set(user, key, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.names[user] == nil {
		l.names[user] = map[string]string{}
	}
	l.names[user][key] = name
}

func (l *labels) Lookup(ctx context.Context, addrs []ulclient.AddressRef) (ulclient.Lookup, error) {
	id, _ := httpx.IdentityFrom(ctx)
	out := ulclient.Lookup{Labels: map[string]ulclient.Label{}, Entities: map[string][]ulclient.EntityRef{}}
	l.mu.Lock()
	l.asked += len(addrs)
	for _, a := range addrs {
		if n, ok := l.names[id.UserID][a.Key()]; ok {
			out.Labels[a.Key()] = ulclient.Label{Name: n}
		}
	}
	hold := l.hold
	l.mu.Unlock()
	if hold != nil {
		<-hold
	}
	return out, nil
}

func (l *labels) AdditionsOf(context.Context, []string) (map[string]map[string][]string, error) {
	return map[string]map[string][]string{}, nil
}

func (l *labels) Entities(context.Context, []string) (map[string]ulclient.UserEntity, error) {
	return map[string]ulclient.UserEntity{}, nil
}

func as(user string) context.Context {
	return httpx.WithIdentity(context.Background(), httpx.Identity{UserID: user})
}

func nameOf(t *testing.T, c *app.LabelCache, user string, a ulclient.AddressRef) string {
	t.Helper()
	got, err := c.Lookup(as(user), []ulclient.AddressRef{a})
	if err != nil {
		t.Fatal(err)
	}
	return got.Labels[a.Key()].Name
}

func change(user string, addrs ...ulclient.AddressRef) []eventbus.Message[*eventsv1.UserChange] {
	m := &eventsv1.UserChange{UserId: user, Kind: eventsv1.UserChange_KIND_LABEL, Op: eventsv1.UserChange_OP_UPSERT}
	for _, a := range addrs {
		m.Addresses = append(m.Addresses, &eventsv1.AddressRef{ChainType: a.ChainType, Address: a.Address})
	}
	return []eventbus.Message[*eventsv1.UserChange]{{Msg: m}}
}

// A change on user.changes.v1 drops exactly the caller's cached answers it names, so the next
// lookup shows the edit long before the TTL; other callers' and other addresses' entries stay.
func TestLabelCacheFollowsUserChanges(t *testing.T) {
	ctx := context.Background()
	up := &labels{names: map[string]map[string]string{}}
	c := app.NewLabelCache(up, time.Hour, 1000)
	h := events.UserChanges(c)
	wallet := ulclient.AddressRef{ChainType: "evm", Address: "0x00000000000000000000000000000000000000aa"}
	other := ulclient.AddressRef{ChainType: "evm", Address: "0x00000000000000000000000000000000000000bb"}
	up.set("alice", wallet.Key(), "hot")
	up.set("bob", wallet.Key(), "bob's")
	up.set("alice", other.Key(), "other")
	for _, u := range []string{"alice", "bob"} {
		nameOf(t, c, u, wallet)
	}
	nameOf(t, c, "alice", other)
	if c.Len() != 3 || up.asked != 3 {
		t.Fatalf("cache holds %d entries after %d asked, want 3 and 3", c.Len(), up.asked)
	}

	up.set("alice", wallet.Key(), "cold")
	up.set("bob", wallet.Key(), "bob's new")
	if got := nameOf(t, c, "alice", wallet); got != "hot" {
		t.Fatalf("before the change event: %q, want the cached %q", got, "hot")
	}
	// The event names the address as the user wrote it (checksummed); the cache keys it normalised.
	if err := h(ctx, change("alice", ulclient.AddressRef{ChainType: "evm", Address: "0x00000000000000000000000000000000000000AA"})); err != nil {
		t.Fatal(err)
	}
	if got := nameOf(t, c, "alice", wallet); got != "cold" {
		t.Fatalf("after the change: %q, want %q", got, "cold")
	}
	if got := nameOf(t, c, "bob", wallet); got != "bob's" {
		t.Fatalf("bob's entry was dropped by alice's change: %q", got)
	}
	asked := up.asked
	if got := nameOf(t, c, "alice", other); got != "other" || up.asked != asked {
		t.Fatalf("alice's other address was asked again (%q, %d → %d)", got, asked, up.asked)
	}

	// An alert's change (KIND_ALERT) names no address and changes no label: it drops nothing.
	alert := []eventbus.Message[*eventsv1.UserChange]{{Msg: &eventsv1.UserChange{UserId: "bob",
		Kind: eventsv1.UserChange_KIND_ALERT, Op: eventsv1.UserChange_OP_DELETE, AlertId: 7}}}
	if err := h(ctx, alert); err != nil {
		t.Fatal(err)
	}
	if c.Len() != 3 {
		t.Fatalf("an alert change dropped label entries: %d left, want 3", c.Len())
	}

	// A change naming no address drops all the caller's entries; redelivered, nothing more.
	for range 2 {
		if err := h(ctx, change("bob")); err != nil {
			t.Fatal(err)
		}
	}
	if c.Len() != 2 {
		t.Fatalf("cache holds %d entries, want alice's 2", c.Len())
	}
	if got := nameOf(t, c, "bob", wallet); got != "bob's new" {
		t.Fatalf("bob after his change: %q", got)
	}
}

// An answer fetched while a change arrives may predate it: it is returned but not kept.
func TestLabelCacheDoesNotKeepAnAnswerOlderThanAChange(t *testing.T) {
	up := &labels{names: map[string]map[string]string{}, hold: make(chan struct{})}
	c := app.NewLabelCache(up, time.Hour, 1000)
	wallet := ulclient.AddressRef{ChainType: "evm", Address: "0x00000000000000000000000000000000000000aa"}
	up.set("alice", wallet.Key(), "hot")
	done := make(chan string)
	go func() {
		got, _ := c.Lookup(as("alice"), []ulclient.AddressRef{wallet})
		done <- got.Labels[wallet.Key()].Name
	}()
	for { // wait until the lookup is inside user-labels
		up.mu.Lock()
		asked := up.asked
		up.mu.Unlock()
		if asked == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	up.set("alice", wallet.Key(), "cold")
	if err := events.UserChanges(c)(context.Background(), change("alice", wallet)); err != nil {
		t.Fatal(err)
	}
	close(up.hold)
	if got := <-done; got != "hot" {
		t.Fatalf("the lookup in flight answered %q", got)
	}
	if c.Len() != 0 {
		t.Fatalf("the answer that predates the change was kept")
	}
	if got := nameOf(t, c, "alice", wallet); got != "cold" {
		t.Fatalf("next lookup: %q, want %q", got, "cold")
	}
}
