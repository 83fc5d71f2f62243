package engine

import (
	"maps"
	"slices"
	"testing"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
)

// TestKnownNames: an entity id is known while an attribution names it as the address's entity or
// its deposit service, a type while an attribution's entity has it; an older version applied
// after a newer one changes nothing, a replaced or deleted attribution stops counting.
func TestKnownNames(t *testing.T) {
	e := New(Options{})
	k1, k2, k3 := AttrKey{"evm", addr(1)}, AttrKey{"evm", addr(2)}, AttrKey{"evm", addr(3)}
	e.SetAttr(k1, &render.Attr{Entity: &render.Entity{ID: "exch", Type: "cex"}, Version: 2})
	e.SetAttr(k1, &render.Attr{Entity: &render.Entity{ID: "stale", Type: "stale"}, Version: 1})
	e.SetAttr(k2, &render.Attr{DepositServiceID: "okx", Version: 1})
	e.SetAttr(k3, &render.Attr{Entity: &render.Entity{ID: "fund1", Type: "fund"}, Version: 1})
	check := func(loaded bool, types []string, known map[string]bool) {
		t.Helper()
		ids := []string{"exch", "stale", "okx", "fund1", "nope"}
		n := e.KnownNames(ids)
		got := map[string]bool{}
		for _, id := range ids {
			got[id] = n.Entity(id)
		}
		want := map[string]bool{"exch": false, "stale": false, "okx": false, "fund1": false, "nope": false}
		for id, v := range known {
			want[id] = v
		}
		if n.Loaded != loaded || !slices.Equal(n.Types(), types) || !maps.Equal(got, want) {
			t.Fatalf("loaded %v types %v entities %v; want %v %v %v", n.Loaded, n.Types(), got, loaded, types, want)
		}
	}
	check(false, []string{"cex", "fund"}, map[string]bool{"exch": true, "okx": true, "fund1": true})
	e.SetLoaded()
	e.SetAttr(k3, &render.Attr{Entity: &render.Entity{ID: "exch", Type: "cex"}, Version: 2})
	e.SetAttr(k2, nil)
	check(true, []string{"cex"}, map[string]bool{"exch": true})
	e.SetAttr(k1, nil)
	e.SetAttr(k3, nil)
	check(true, []string{}, nil)
}
