package http_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	svchttp "github.com/chainintel/chainintel/services/transfers/internal/http"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	"github.com/chainintel/chainintel/services/transfers/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

// busyWorld is a database of its own holding one live entity "xx" (two addresses) with more
// transfers than the offset window reaches, many of them sharing a block time (so pages end
// inside runs of equal keys), and transfers of outside addresses between them.
type busyWorld struct {
	env  *env
	rows []store.TransferRow // every transfer stored
	own  func(string) bool   // the entity's addresses
}

func busyEntityWorld(t *testing.T) *busyWorld {
	t.Helper()
	w, err := loadBusyWorld(t)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func loadBusyWorld(t *testing.T) (*busyWorld, error) {
	ctx := context.Background()
	url, drop, err := pgtest.CreateDatabase(ctx, "transfers_cursor")
	if err != nil {
		return nil, err
	}
	t.Cleanup(drop)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, err
	}
	t.Cleanup(pool.Close)
	if err := pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil); err != nil {
		return nil, err
	}
	o := store.DefaultOptions()
	o.GroupMin, o.InlineRollups = 0, true
	st := store.New(pool, o)
	addr := func(n int) string { return fmt.Sprintf("0x%040x", 0xc000+n) }
	x1, x2 := addr(1), addr(2)
	now := time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC)
	ex := &store.Entity{ID: "xx", Name: "XX", Type: "cex"}
	if err := st.ApplyAttributions(ctx, []store.Attribution{
		{ChainType: "evm", Address: x1, Entity: ex, Version: 1, UpdatedAt: now},
		{ChainType: "evm", Address: x2, Entity: ex, Version: 1, UpdatedAt: now},
	}, nil); err != nil {
		return nil, err
	}
	// 13,500 transfers over eight days across the end of January; every third shares its
	// second with up to 40 others, and values come from 30 amounts, so both keys tie.
	start := time.Date(2026, 1, 27, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(29, 1))
	var all []store.TransferRow
	var burst time.Time
	for i := range 13500 {
		h := fmt.Sprintf("0x%064x", 0xc0000+i)
		at := start.Add(time.Duration(rng.IntN(8*24*3600)) * time.Second)
		if i%3 == 0 {
			if i%120 == 0 {
				burst = at
			}
			at = burst
		}
		own, other := []string{x1, x2}[i%2], addr(100+rng.IntN(400))
		from, to := own, other
		switch {
		case i%9 == 1:
			from, to = addr(600+rng.IntN(50)), other
		case i%2 == 0:
			from, to = other, own
		}
		all = append(all, store.TransferRow{Chain: []string{"ethereum", "base", "arbitrum_one"}[i%3], ID: fmt.Sprintf("%s_%d", h, i%4),
			TxHash: h, BlockHash: h, BlockNumber: int64(i), BlockTime: at, From: from, To: to, TokenID: "ethereum",
			TokenSymbol: "ETH", TokenDecimals: 18, Amount: big.NewInt(int64(1 + i%30)), UnitValue: float64(1+i%30) / 4})
	}
	for i := 0; i < len(all); i += 5000 {
		if _, err := st.WriteTransfers(ctx, all[i:min(i+5000, len(all))]); err != nil {
			return nil, err
		}
	}
	cs, _ := chains.NewSet(nil)
	signer := httpx.NewSigner(secret)
	r := httpx.NewEngine(httpx.EngineOptions{Service: "transfers"})
	r.Use(httpx.IdentityMiddleware(signer))
	svchttp.Register(r, app.New(st, nil, cs), query.Parser{Chains: cs, Now: func() time.Time { return now }})
	return &busyWorld{env: &env{router: r, store: st}, rows: all, own: func(a string) bool { return a == x1 || a == x2 }}, nil
}

type cursorPage struct {
	Transfers []struct {
		ID    string `json:"id"`
		Chain string `json:"chain"`
	} `json:"transfers"`
	Count      int    `json:"count"`
	NextCursor string `json:"nextCursor"`
}

// TestCursors pages a busy entity to the end and checks the cursor's errors, on one world.
func TestCursors(t *testing.T) {
	w := busyEntityWorld(t)
	t.Run("to the end", func(t *testing.T) { testCursorPagesToTheEnd(t, w) })
	t.Run("errors", func(t *testing.T) { testCursorErrors(t, w) })
}

// Paging /transfers?base=<busy entity>&includeCursors=true to the end returns every matching
// transfer exactly once, in order, past the 10,000-row offset window: by time both ways and by
// value (runs of equal values cross pages), at several page sizes; in and out (6,000 each)
// page the entity's one-sided reads.
func testCursorPagesToTheEnd(t *testing.T, w *busyWorld) {
	for _, c := range []struct {
		key, dir, flow string
		limit          int
	}{
		{"time", "desc", "all", 1000},
		{"time", "asc", "all", 377},
		{"time", "desc", "in", 41},
		{"value", "desc", "all", 500},
		{"value", "asc", "out", 999},
	} {
		t.Run(fmt.Sprintf("%s-%s-%s-%d", c.key, c.dir, c.flow, c.limit), func(t *testing.T) {
			var want []store.TransferRow
			for _, r := range w.rows {
				f, to := w.own(r.From), w.own(r.To)
				if map[string]bool{"all": f || to, "in": to && !f, "out": f && !to}[c.flow] {
					want = append(want, r)
				}
			}
			slices.SortFunc(want, func(a, b store.TransferRow) int {
				k := a.BlockTime.Compare(b.BlockTime)
				if c.key == "value" {
					k = cmp.Compare(a.UnitValue, b.UnitValue)
				}
				d := cmp.Or(k, cmp.Compare(a.Chain, b.Chain), cmp.Compare(a.ID, b.ID))
				if c.dir == "desc" {
					return -d
				}
				return d
			})
			if c.flow == "all" && len(want) <= query.MaxWindow {
				t.Fatalf("only %d matching transfers; the world must exceed the offset window", len(want))
			}
			q := url.Values{"base": {"xx"}, "flow": {c.flow}, "sortKey": {c.key}, "sortDir": {c.dir},
				"limit": {fmt.Sprint(c.limit)}, "includeCursors": {"true"}}
			var got []string
			seen := map[string]int{}
			for turn := 0; ; turn++ {
				if turn > len(want)/c.limit+2 {
					t.Fatalf("still paging after %d turns", turn)
				}
				res := w.env.get(t, &bob, "/transfers?"+q.Encode())
				if res.status != http.StatusOK {
					t.Fatalf("turn %d: %d %s", turn, res.status, res.body)
				}
				var p cursorPage
				if err := json.Unmarshal(res.body, &p); err != nil {
					t.Fatal(err)
				}
				if turn == 0 && p.Count != min(len(want), store.MaxCount) {
					t.Errorf("first page count %d, want %d", p.Count, min(len(want), store.MaxCount))
				}
				// Every page's count is the matches from its cursor on: exact below the cap
				// (carried by the cursor from the page before), the cap well above it. Near the
				// cap the rows of the cursor's key it drops may leave the cap standing.
				if left := len(want) - len(got); (p.Count < store.MaxCount || left < store.MaxCount-1000) && p.Count != left {
					t.Errorf("turn %d: count %d, want %d", turn, p.Count, left)
				}
				for _, tr := range p.Transfers {
					got = append(got, tr.ID+"@"+tr.Chain)
					seen[tr.ID+"@"+tr.Chain]++
				}
				if p.NextCursor == "" {
					break
				}
				if len(p.Transfers) != c.limit {
					t.Fatalf("turn %d: a cursor after a short page of %d", turn, len(p.Transfers))
				}
				q.Set("cursor", p.NextCursor)
			}
			exp := make([]string, len(want))
			for i, r := range want {
				exp[i] = r.ID + "@" + r.Chain
			}
			for id, n := range seen {
				if n > 1 {
					t.Errorf("%s returned %d times", id, n)
				}
			}
			if !slices.Equal(got, exp) {
				i := 0
				for i < min(len(got), len(exp)) && got[i] == exp[i] {
					i++
				}
				t.Fatalf("paged %d transfers, want %d; first difference at %d", len(got), len(exp), i)
			}
		})
	}
}

// A cursor is refused, naming the parameter, when damaged, used with other filters or another
// sort, beside an offset, or with sortKey=usd.
func testCursorErrors(t *testing.T, w *busyWorld) {
	res := w.env.get(t, &bob, "/transfers?base=xx&includeCursors=true&limit=5")
	var p cursorPage
	if err := json.Unmarshal(res.body, &p); err != nil || p.NextCursor == "" {
		t.Fatalf("first page: %d %s", res.status, res.body)
	}
	cur := url.QueryEscape(p.NextCursor)
	for _, c := range []struct{ path, want string }{
		{"/transfers?base=xx&cursor=" + cur + "&chains=base", "cursor: was issued for other filters; give the query it came from"},
		{"/transfers?base=xx&cursor=" + cur + "&sortDir=asc", "cursor: was issued for sortKey=time&sortDir=desc; give the same sort"},
		{"/transfers?base=xx&cursor=" + cur + "&offset=5", "offset: must be 0 with a cursor (the cursor is the position)"},
		{"/transfers?base=xx&cursor=" + cur[:len(cur)-2], "cursor: is not a cursor (pass the nextCursor of the previous page unchanged)"},
		{"/transfers?base=xx&cursor=" + strings.Repeat("A", 600), "cursor: must be 1 to 512 characters (pass the nextCursor of the previous page unchanged)"},
		{"/transfers?base=xx&includeCursors=yes", `includeCursors: must be true or false, got "yes"`},
		{"/transfers?base=xx&includeCursors=true&sortKey=usd", "includeCursors: cursors page by sortKey time or value, not usd"},
	} {
		res := w.env.get(t, &bob, c.path)
		want, _ := json.Marshal(map[string]string{"error": c.want})
		if res.status != http.StatusBadRequest || string(res.body) != string(want) {
			t.Errorf("%s: %d %s, want 400 %s", c.path, res.status, res.body, want)
		}
	}
	// The same cursor with the same filters in another order, and another limit, is accepted.
	res = w.env.get(t, &bob, "/transfers?limit=7&cursor="+cur+"&base=xx")
	if res.status != http.StatusOK {
		t.Fatalf("reordered query: %d %s", res.status, res.body)
	}
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

// cursorAfter returns the nextCursor of the answer to path.
func cursorAfter(t *testing.T, e *env, path string) string {
	t.Helper()
	var p cursorPage
	mustJSON(t, e.get(t, &bob, path).body, &p)
	return p.NextCursor
}
