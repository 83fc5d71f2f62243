package engine

import (
	"testing"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
)

// A side's set answers the same whether it holds one value (compared without a map) or
// several (kept in maps): addresses, entities (their own and their deposit addresses), entity
// types and deposit services.
func TestRefSetOneAndMany(t *testing.T) {
	exch := &render.Attr{Entity: &render.Entity{ID: "exch", Type: "cex"}}
	dep := &render.Attr{DepositServiceID: "exch"}
	other := &render.Attr{Entity: &render.Entity{ID: "fund1", Type: "fund"}}
	type probe struct {
		addr string
		at   *render.Attr
	}
	probes := []probe{{addr(1), nil}, {addr(2), exch}, {addr(3), dep}, {addr(4), other}, {addr(5), nil}, {"", &render.Attr{}}}
	refs := map[string]filter.Ref{
		"address": {Kind: filter.KindAddress, Addresses: []string{addr(1)}},
		"entity":  {Kind: filter.KindEntity, Value: "exch"},
		"type":    {Kind: filter.KindType, Value: "fund"},
		"deposit": {Kind: filter.KindDeposit, Value: "exch"},
	}
	want := map[string][]bool{
		"address": {true, false, false, false, false, false},
		"entity":  {false, true, true, false, false, false},
		"type":    {false, false, false, true, false, false},
		"deposit": {false, false, true, false, false, false},
	}
	for name, r := range refs {
		var one refSet
		one.add(r, nil)
		if one.many != nil {
			t.Fatalf("%s: one value kept in maps", name)
		}
		// The same reference beside one that matches none of the probes: kept in maps.
		var many refSet
		many.add(r, nil)
		many.add(filter.Ref{Kind: filter.KindAddress, Addresses: []string{addr(9)}}, nil)
		if many.many == nil {
			t.Fatalf("%s: two values not kept in maps", name)
		}
		for i, p := range probes {
			if got := one.has(p.addr, p.at); got != want[name][i] {
				t.Errorf("%s (one value), probe %d: %v, want %v", name, i, got, want[name][i])
			}
			if got := many.has(p.addr, p.at); got != want[name][i] {
				t.Errorf("%s (maps), probe %d: %v, want %v", name, i, got, want[name][i])
			}
		}
		if ks := one.keys(); len(ks) != 1 || len(many.keys()) != 2 {
			t.Errorf("%s: index keys %v and %v", name, ks, many.keys())
		}
	}
	var empty refSet
	empty.add(filter.Ref{Kind: filter.KindUserEntity, Value: "u1"}, nil) // a user entity without addresses
	if empty.n != 1 || empty.has("", nil) || empty.has(addr(1), exch) || len(empty.keys()) != 0 {
		t.Fatal("a reference without values matches nothing and has no index key")
	}

	// The caller's additions to an entity match as its addresses, besides the entity's own.
	var added refSet
	added.add(refs["entity"], map[string][]string{"exch": {addr(5)}})
	for i, p := range probes {
		if got, exp := added.has(p.addr, p.at), want["entity"][i] || p.addr == addr(5); got != exp {
			t.Errorf("entity with additions, probe %d: %v, want %v", i, got, exp)
		}
	}
	if ks := added.keys(); len(ks) != 2 {
		t.Errorf("entity with additions: index keys %v, want the entity and the added address", ks)
	}
}
