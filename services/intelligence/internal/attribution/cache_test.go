package attribution

import (
	"context"
	"fmt"
	"reflect"
	"testing"
)

type fakeChanges struct {
	ents  []Entity
	addrs []Address
}

func (f *fakeChanges) EntitiesSince(_ context.Context, v int64, limit int) ([]Entity, error) {
	var out []Entity
	for _, e := range f.ents {
		if e.Version > v && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (f *fakeChanges) AddressesSince(_ context.Context, v int64, limit int) ([]Address, error) {
	var out []Address
	for _, a := range f.addrs {
		if a.Version > v && len(out) < limit {
			out = append(out, a)
		}
	}
	return out, nil
}

func TestCacheFollowsChanges(t *testing.T) {
	src := &fakeChanges{ents: []Entity{{ID: "acme", Name: "Acme", Type: "cex", Version: 1}}}
	for i := range 25000 { // more than one refresh page
		src.addrs = append(src.addrs, Address{ChainType: "evm", Address: fmt.Sprintf("0x%040x", i), EntityID: "acme", Label: fmt.Sprint("w", i), Version: int64(2 + i)})
	}
	src.addrs = append(src.addrs, Address{ChainType: "ton", Address: "0:abc", DepositServiceID: "acme", PredictedEntity: "acme", ClusterIDs: []string{"cl-1", "cl-2"}, IsContract: true, Version: 30000})
	c := NewCache(src)
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c.Len() != 25001 {
		t.Fatalf("len %d", c.Len())
	}
	k0, kt := Key("evm", fmt.Sprintf("0x%040x", 0)), Key("ton", "0:abc")
	got := c.Lookup([]string{k0, kt, "evm:0xnothing"})
	acme := &Entity{ID: "acme", Name: "Acme", Type: "cex", Version: 1}
	want := []Resolved{
		{Known: true, Address: Address{ChainType: "evm", Address: fmt.Sprintf("0x%040x", 0), EntityID: "acme", Label: "w0"}, Entity: acme},
		{Known: true, Address: Address{ChainType: "ton", Address: "0:abc", DepositServiceID: "acme", PredictedEntity: "acme", ClusterIDs: []string{"cl-1", "cl-2"}, IsContract: true}, Predicted: acme},
		{},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("lookup:\n got %+v\nwant %+v", got, want)
	}
	// A relabel and an entity rename arrive with higher versions.
	src.addrs = append(src.addrs, Address{ChainType: "evm", Address: fmt.Sprintf("0x%040x", 0), EntityID: "", Label: "renamed", Version: 30001})
	src.ents = append(src.ents, Entity{ID: "acme", Name: "Acme Ltd", Type: "cex", Version: 30002})
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	got = c.Lookup([]string{k0, kt})
	if r := got[0]; r.Entity != nil || r.Label != "renamed" || c.Len() != 25001 {
		t.Fatalf("after relabel: %+v (len %d)", r, c.Len())
	}
	if r := got[1]; r.Predicted == nil || r.Predicted.Name != "Acme Ltd" {
		t.Fatalf("after rename: %+v", r)
	}
}
