package app

import (
	"testing"
)

func TestUserCacheServesOnlyTheSameVersions(t *testing.T) {
	c := newUserCache[string](1 << 20)
	c.put("u", Versions{3, 1}, "v3", 10)
	for _, v := range []Versions{{4, 1}, {3, 2}, {0, 0}} {
		if _, ok := c.get("u", v); ok {
			t.Fatalf("served an answer built at other versions %v", v)
		}
	}
	if got, ok := c.get("u", Versions{3, 1}); !ok || got != "v3" {
		t.Fatalf("get: %q %v", got, ok)
	}
	c.put("u", Versions{5, 1}, "v5", 10)
	if got, ok := c.get("u", Versions{5, 1}); !ok || got != "v5" {
		t.Fatalf("after a newer put: %q %v", got, ok)
	}
	if c.lru.Len() != 1 || c.bytes != 10+1+64 {
		t.Fatalf("%d entries, %d bytes", c.lru.Len(), c.bytes)
	}
}

func TestUserCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newUserCache[int](400) // each entry below costs 35 + 1 + 64 = 100
	for i, u := range []string{"a", "b", "c", "d"} {
		c.put(u, Versions{1, 0}, i, 35)
	}
	c.get("a", Versions{1, 0}) // a is now the most recent
	c.put("e", Versions{1, 0}, 4, 35)
	if _, ok := c.get("b", Versions{1, 0}); ok {
		t.Fatal("b, the least recently used, was kept")
	}
	for _, u := range []string{"a", "c", "d", "e"} {
		if _, ok := c.get(u, Versions{1, 0}); !ok {
			t.Fatalf("%s was evicted", u)
		}
	}
	if c.bytes != 400 {
		t.Fatalf("accounted %d bytes", c.bytes)
	}
	// A value over a quarter of the budget is not kept.
	c.put("big", Versions{1, 0}, 5, 200)
	if _, ok := c.get("big", Versions{1, 0}); ok {
		t.Fatal("cached a value over a quarter of the budget")
	}
}
