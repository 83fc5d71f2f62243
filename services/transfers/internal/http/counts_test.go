package http_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
)

// A count answered from rollups must equal the rows listed, for windows that cut hours (and
// days) at both ends, open at either end, or lying within one hour: the whole buckets come
// from the rollups and the cut hours from the rows.
func TestCountsOverCutWindows(t *testing.T) {
	t.Run("default plans", testCountsOverCutWindows)
	t.Run("entity-rollup plans", func(t *testing.T) {
		defer plans(t, largeSets(0))()
		defer liveGroups(t)()
		testCountsOverCutWindows(t)
	})
	t.Run("entity-rollup plans, all-time counts a day at a time", func(t *testing.T) {
		defer plans(t, largeSets(0))()
		defer plans(t, func(o *store.Options) { o.CountChunkDays = 1 })()
		defer liveGroups(t)()
		testCountsOverCutWindows(t)
	})
}

func testCountsOverCutWindows(t *testing.T) {
	e := world(t)
	filters := []string{"", "base=binance", "base=binance&flow=in", "base=coinbase&flow=out", "base=coinbase&flow=self", "from=type:cex&to=type:cex",
		"to=type:cex&from=!type:cex", "from=binance", "to=!binance", "from=binance&to=coinbase", "base=" + tw.H1,
		"base=binance&chains=ethereum&tokens=usd-coin", "base=binance&usdGte=1000", "base=binance&flow=out&usdLte=5000", "base=coinbase&valueGte=1",
		"from=binance&to=type:cex", "from=type:cex&to=coinbase&usdGte=600", "from=deposit:binance&to=binance",
		"base=binance,coinbase", "base=binance,coinbase&flow=self", "base=coinbase,binance,uniswap&flow=in",
		"from=binance&usdGte=2000", "to=coinbase", "to=binance&usdLte=5000", "from=coinbase&valueGte=1",
		"from=binance&to=!coinbase", "to=binance&from=!deposit:binance&usdGte=500", "from=deposit:coinbase&to=coinbase",
		"from=deposit:binance&to=type:cex&usdGte=500", "to=deposit:coinbase&from=!type:cex", "from=type:individual&to=binance&usdGte=1", "from=type:fund&to=binance&usdGte=1",
		"base=binance," + tw.U1, "base=binance," + tw.U1 + "&flow=self", "base=binance," + tw.U1 + "&flow=in",
		"base=coinbase," + tw.U2 + "&flow=out", "base=coinbase," + tw.H1 + "," + tw.U1 + "&chains=ethereum", "base=binance," + tw.H1,
		"base=binance," + tw.U2 + "&flow=out", "base=binance," + tw.U2 + "&flow=self"}
	var windows []string
	at := func(d time.Duration) string { return jsonInt(tw.D0.Add(d).UnixMilli()) }
	for _, lo := range []time.Duration{-time.Hour, 10*time.Hour + 17*time.Minute, 10 * time.Hour, 35*time.Hour + 59*time.Minute, 57 * time.Hour} {
		windows = append(windows, "timeGte="+at(lo))
		for _, span := range []time.Duration{20 * time.Minute, 2*time.Hour + 3*time.Minute, 26 * time.Hour, 73*time.Hour + 30*time.Minute} {
			windows = append(windows, "timeGte="+at(lo)+"&timeLte="+at(lo+span))
		}
	}
	windows = append(windows, "timeLte="+at(12*time.Hour+30*time.Minute), "timeLte="+at(60*time.Hour), "") // "": all time
	for _, f := range filters {
		for _, w := range windows {
			q := "/transfers?limit=1000"
			if w != "" {
				q += "&" + w
			}
			if f != "" {
				q += "&" + f
			}
			r := e.get(t, nil, q)
			if r.status != 200 {
				t.Fatalf("%s: %d %s", q, r.status, r.body)
			}
			got, count := ids(t, r.body)
			if count != len(got) {
				t.Errorf("%s: count %d, %d transfers listed", q, count, len(got))
			}
		}
	}
	if t.Failed() {
		return
	}
	// Not vacuous: some windows select transfers, some cut them.
	if _, n := ids(t, e.get(t, nil, "/transfers?base=binance&timeGte="+at(10*time.Hour+17*time.Minute)+"&timeLte="+at(73*time.Hour)).body); n == 0 {
		t.Fatal("a window over the world's transfers counted none")
	}
}

// Pages at every offset, put together, are the whole list: under the entity-rollup plans an
// entity's page at an offset skips the hours before it by their counts, which must neither
// lose nor repeat a transfer at any page boundary, in either direction, with filters the pair
// rows count exactly and with ones they do not.
func TestEntityPagesAtEveryOffset(t *testing.T) {
	t.Run("default plans", testEntityPagesAtEveryOffset)
	t.Run("entity-rollup plans", func(t *testing.T) {
		defer plans(t, largeSets(0))()
		defer liveGroups(t)()
		testEntityPagesAtEveryOffset(t)
	})
}

func testEntityPagesAtEveryOffset(t *testing.T) {
	e := world(t)
	at := func(d time.Duration) string { return jsonInt(tw.D0.Add(d).UnixMilli()) }
	filters := []string{"base=binance", "base=binance&flow=in", "base=coinbase&flow=out", "base=coinbase&flow=self",
		"base=binance&chains=ethereum", "base=binance&tokens=usd-coin", "base=binance&usdGte=1000",
		"base=binance&timeGte=" + at(10*time.Hour), "base=binance&timeGte=" + at(10*time.Hour+17*time.Minute) + "&timeLte=" + at(60*time.Hour),
		"base=binance,coinbase", "base=coinbase,binance,uniswap&usdGte=600", "base=binance,coinbase&flow=self", "base=binance,coinbase,uniswap&flow=in",
		"base=binance,a16z,coinbase&flow=out", "from=binance&to=type:cex", "from=type:cex&to=coinbase",
		"from=binance", "to=coinbase&usdGte=600", "to=binance&timeGte=" + at(10*time.Hour+17*time.Minute),
		"from=binance&to=!coinbase", "from=deposit:binance&to=binance", "from=deposit:coinbase&to=!type:dex", "to=binance&from=!type:cex",
		"base=binance," + tw.U1, "base=coinbase," + tw.U2 + "&usdGte=400", "base=binance," + tw.U2 + "," + tw.H2 + "&chains=ethereum"}
	checked := 0
	for _, f := range filters {
		for _, dir := range []string{"desc", "asc"} {
			q := "/transfers?" + f + "&sortDir=" + dir
			all, _ := ids(t, e.get(t, nil, q+"&limit=1000").body)
			for _, size := range []int{1, 2, 3} {
				var paged []string
				for off := 0; off <= len(all); off += size {
					r := e.get(t, nil, fmt.Sprintf("%s&limit=%d&offset=%d", q, size, off))
					if r.status != 200 {
						t.Fatalf("%s: %d %s", q, r.status, r.body)
					}
					page, _ := ids(t, r.body)
					paged = append(paged, page...)
				}
				if !slices.Equal(paged, all) {
					t.Fatalf("%s, pages of %d:\n got %v\nwant %v", q, size, paged, all)
				}
				checked += len(all)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no transfers paged")
	}
}
