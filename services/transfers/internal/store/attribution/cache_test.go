package attribution

import "testing"

// A read from the database is kept only if it is at least as new as the changes the cache has
// applied (an older read may hold what a change replaced); an address without attribution is
// kept as such.
func TestAttrCacheKeepsNoReadOlderThanItsChanges(t *testing.T) {
	c := newCache(8)
	k, unknown := AddressKey{"evm", "0xa"}, AddressKey{"evm", "0xb"}
	c.seq = 5
	c.put(4, []AddressKey{k}, map[AddressKey]Attribution{k: {Label: "before change 5"}})
	if miss := c.get([]AddressKey{k}, map[AddressKey]Attribution{}); len(miss) != 1 {
		t.Fatal("a read older than the changes applied was kept")
	}
	c.put(5, []AddressKey{k, unknown}, map[AddressKey]Attribution{k: {Label: "current"}})
	out := map[AddressKey]Attribution{}
	if miss := c.get([]AddressKey{k, unknown}, out); len(miss) != 0 || out[k].Label != "current" || len(out) != 1 {
		t.Fatalf("misses %v, cached %+v", miss, out)
	}
}
