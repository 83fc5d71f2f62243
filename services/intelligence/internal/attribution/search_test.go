package attribution

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
	"unsafe"
)

// searchWorld is a cache holding the entities described one a line as "name|type|twitter"
// (ids e<line>-<name>), refreshed from a fake source, and the entities themselves.
func searchWorld(t *testing.T, lines string) (*AttributionCache, []Entity) {
	t.Helper()
	src := &fakeChanges{}
	for i, l := range strings.Split(lines, "\n") {
		f := strings.SplitN(l, "|", 3)
		for len(f) < 3 {
			f = append(f, "")
		}
		src.ents = append(src.ents, Entity{ID: fmt.Sprintf("e%d-%s", i, f[0]), Name: f[0], Type: f[1], Twitter: f[2], Version: int64(i + 1)})
	}
	c := NewCache(src)
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c, src.ents
}

// naiveSearch is what the database-backed plan (store/sql/search_entities.sql and
// search_twitter.sql) answers: every entity ranked, sorted by rank, lower-cased name and id.
func naiveSearch(ents []Entity, q string, twitter bool, limit, offset int) []Entity {
	type hit struct {
		e    Entity
		rank int
	}
	var hits []hit
	for _, e := range ents {
		id, name, tw := strings.ToLower(e.ID), strings.ToLower(e.Name), strings.ToLower(e.Twitter)
		switch {
		case twitter && tw != "" && (tw == q || strings.HasSuffix(tw, "/"+q)):
			hits = append(hits, hit{e, 0})
		case twitter && tw != "" && strings.Contains(tw, q):
			hits = append(hits, hit{e, 1})
		case twitter:
		case id == q || name == q:
			hits = append(hits, hit{e, 0})
		case strings.HasPrefix(id, q) || strings.HasPrefix(name, q):
			hits = append(hits, hit{e, 1})
		case strings.Contains(id, q) || strings.Contains(name, q):
			hits = append(hits, hit{e, 2})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if an, bn := strings.ToLower(a.e.Name), strings.ToLower(b.e.Name); an != bn {
			return an < bn
		}
		return a.e.ID < b.e.ID
	})
	var out []Entity
	for i := offset; i < len(hits) && i < offset+limit; i++ {
		out = append(out, hits[i].e)
	}
	return out
}

// naiveTypes is what store/sql/search_types.sql answers.
func naiveTypes(ents []Entity, q string, limit, offset int) []string {
	seen := map[string]bool{}
	var ranked [3][]string
	for _, e := range ents {
		if e.Type == "" || seen[e.Type] {
			continue
		}
		seen[e.Type] = true
		lt := strings.ToLower(e.Type)
		switch {
		case lt == q:
			ranked[0] = append(ranked[0], e.Type)
		case strings.HasPrefix(lt, q):
			ranked[1] = append(ranked[1], e.Type)
		case strings.Contains(lt, q):
			ranked[2] = append(ranked[2], e.Type)
		}
	}
	var all []string
	for _, r := range ranked {
		sort.Strings(r)
		all = append(all, r...)
	}
	return all[min(offset, len(all)):min(offset+limit, len(all))]
}

func TestSearchEntities(t *testing.T) {
	c, _ := searchWorld(t, "Binance|cex|https://twitter.com/binance\nBinance.US|cex\nFund Formerly Binance|fund\nKraken|cex|https://x.com/krakenfx\nbinance|Exchange")
	ids := func(es []Entity) []string {
		out := []string{}
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	for _, tc := range []struct {
		q             string
		limit, offset int
		want          []string
	}{
		{"binance", 10, 0, []string{"e0-Binance", "e4-binance", "e1-Binance.US", "e2-Fund Formerly Binance"}},
		{"binance", 2, 1, []string{"e4-binance", "e1-Binance.US"}},
		{"binance", 10, 4, []string{}},
		{"e3", 10, 0, []string{"e3-Kraken"}},
		{"%", 10, 0, []string{}},
	} {
		if got := ids(c.SearchEntities(tc.q, tc.limit, tc.offset)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SearchEntities(%q, %d, %d) = %v, want %v", tc.q, tc.limit, tc.offset, got, tc.want)
		}
	}
	if got := ids(c.SearchTwitter("krakenfx", 10, 0)); !reflect.DeepEqual(got, []string{"e3-Kraken"}) {
		t.Errorf("SearchTwitter(krakenfx) = %v", got)
	}
	if got := ids(c.SearchTwitter("x.com", 10, 0)); !reflect.DeepEqual(got, []string{"e3-Kraken"}) {
		t.Errorf("SearchTwitter(x.com) = %v", got)
	}
	if got := c.SearchTypes("ex", 10, 0); !reflect.DeepEqual(got, []string{"Exchange", "cex"}) {
		t.Errorf("SearchTypes(ex) = %v", got)
	}
	if got := c.SearchTypes("c", 10, 0); !reflect.DeepEqual(got, []string{"cex", "Exchange"}) {
		t.Errorf("SearchTypes(c) = %v", got)
	}
}

// FuzzSearchEntities: the in-memory entity, twitter and type search answer what the
// database-backed plan's statements answer (naiveSearch, naiveTypes), for any entities, query
// and page.
func FuzzSearchEntities(f *testing.F) {
	f.Add("Binance|cex|https://twitter.com/binance\nBinance.US|cex\nbinance|fund", "binance", uint8(10), uint8(0))
	f.Add("a|b|c\nA|B|C\nab|ba|/a", "a", uint8(1), uint8(1))
	f.Add("Ünï|ß|x/ß\n\n|", "ß", uint8(3), uint8(0))
	f.Fuzz(func(t *testing.T, lines, query string, limit, offset uint8) {
		q := strings.ToLower(query)
		if q == "" {
			return // the service answers an empty query with nothing before searching
		}
		c, ents := searchWorld(t, lines)
		l, o := int(limit%20), int(offset%20)
		if got, want := c.SearchEntities(q, l, o), naiveSearch(ents, q, false, l, o); !sameEntities(got, want) {
			t.Fatalf("SearchEntities(%q, %d, %d) = %v, want %v", q, l, o, got, want)
		}
		if got, want := c.SearchTwitter(q, l, o), naiveSearch(ents, q, true, l, o); !sameEntities(got, want) {
			t.Fatalf("SearchTwitter(%q, %d, %d) = %v, want %v", q, l, o, got, want)
		}
		if got, want := c.SearchTypes(q, l, o), naiveTypes(ents, q, l, o); len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("SearchTypes(%q, %d, %d) = %v, want %v", q, l, o, got, want)
		}
	})
}

func sameEntities(a, b []Entity) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

// A search ranks its matches without copying them: paging 5 of 20,000 matching entities
// allocates less than half of what copying every match would (before, each match was copied
// into its rank's list, and the page taken from those copies).
func TestSearchCopiesOnlyThePage(t *testing.T) {
	const n = 20_000
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "Binance %d|cex|https://twitter.com/binance%d", i, i)
	}
	c, _ := searchWorld(t, b.String())
	copies := uint64(n * unsafe.Sizeof(Entity{}))
	for _, search := range []func() []Entity{
		func() []Entity { return c.SearchEntities("binance", 5, 10) },
		func() []Entity { return c.SearchTwitter("binance", 5, 10) },
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got := search()
		runtime.ReadMemStats(&after)
		if len(got) != 5 {
			t.Fatalf("%d entities, want 5", len(got))
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc >= copies/2 {
			t.Fatalf("a page of 5 of %d matches allocated %d bytes; copying every match is %d", n, alloc, copies)
		}
	}
}
