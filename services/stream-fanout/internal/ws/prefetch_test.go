package ws

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// countingLabels is user-labels holding the caller's user entities ents (each holding one
// address) and additions of one address to every operator entity, counting the calls.
type countingLabels struct {
	ents               map[string]bool
	entities, addition atomic.Int64
}

func (l *countingLabels) Book(context.Context) (Book, error) { return Book{}, nil }
func (l *countingLabels) Entities(_ context.Context, ids []string) (map[string]ulclient.UserEntity, error) {
	l.entities.Add(1)
	out := map[string]ulclient.UserEntity{}
	for _, id := range ids {
		if l.ents[id] {
			out[id] = ulclient.UserEntity{ID: id, Addresses: map[string][]string{"evm": {testAddr(len(out))}}}
		}
	}
	return out, nil
}
func (l *countingLabels) Additions(_ context.Context, ids []string) (map[string]map[string][]string, error) {
	l.addition.Add(1)
	out := map[string]map[string][]string{}
	for _, id := range ids {
		out[id] = map[string][]string{"evm": {testAddr(50)}}
	}
	return out, nil
}

// A filter naming many entities, operator and user ones, in every list asks user-labels once
// per kind (its user entities, the caller's additions), not once per entity; additions read
// are cached, so the next filter naming the same operator entities asks only for user
// entities. An unknown user entity is refused after the one call.
func TestFilterEntitiesOneCallPerKind(t *testing.T) {
	l := &countingLabels{ents: map[string]bool{}}
	var ops, users []string
	for i := range 40 {
		ops = append(ops, fmt.Sprintf("exch%d", i))
		id := fmt.Sprintf("6f1c2a1e-1d2b-4c3d-8e9f-%012d", i)
		users = append(users, id)
		l.ents[id] = true
	}
	h := additionsHub(t, l)
	c, _ := liveConn(t, h, "owner")
	list := func(vs ...[]string) filter.List {
		var out filter.List
		for _, v := range vs {
			out = append(out, v...)
		}
		return out
	}
	raw := filter.Raw{From: list(ops[:20], users[:20]), To: list(ops[20:], users[20:])}
	if _, err := c.compile(c.ctx, "f", raw); err != nil {
		t.Fatal(err)
	}
	if e, a := l.entities.Load(), l.addition.Load(); e != 1 || a != 1 {
		t.Fatalf("a filter of 40 operator and 40 user entities: %d user entity calls, %d additions calls; want 1 and 1", e, a)
	}
	if _, err := c.compile(c.ctx, "g", filter.Raw{From: list(ops, users)}); err != nil {
		t.Fatal(err)
	}
	if e, a := l.entities.Load(), l.addition.Load(); e != 2 || a != 1 {
		t.Fatalf("the next filter: %d user entity calls, %d additions calls; want 2 and 1 (additions cached)", e, a)
	}
	unknown := "0b7e6a52-93c4-4f0e-9d3a-2c1b0a9f8e7d"
	_, err := c.compileNew(c.ctx, "h", filter.Raw{From: list(users[:5], []string{unknown}, users[5:])})
	if err == nil || !strings.Contains(err.Error(), `unknown entity "`+unknown+`"`) || l.entities.Load() != 3 {
		t.Fatalf("an unknown user entity: %v after %d user entity calls, want refused after 3", err, l.entities.Load())
	}
}
