package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	"github.com/chainintel/chainintel/services/transfers/internal/events"
	svchttp "github.com/chainintel/chainintel/services/transfers/internal/http"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
	"github.com/chainintel/chainintel/services/transfers/migrations"
	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"
)

// denseTransfers are 780 transfers over the world's first 50 hours, about one every five
// minutes at uneven seconds and milliseconds, among binance's hot wallet and deposit address,
// the customers, the fund, coinbase's hot wallet and two unattributed addresses: binance
// internal ones, self transfers, both chains, native and USDC, some without a price.
func denseTransfers() []*eventsv1.Transfer {
	people := []string{tw.H1, tw.D1, tw.U1, tw.U2, tw.F, tw.H2,
		"0x6000000000000000000000000000000000000001", "0x6000000000000000000000000000000000000002"}
	var out []*eventsv1.Transfer
	for i := range 600 {
		at := time.Duration(i)*5*time.Minute + time.Duration(i*37%290)*time.Second + time.Duration(i*113%1000)*time.Millisecond
		from, to := people[i%8], people[(i*3+1)%8]
		if i%50 == 7 {
			to = from
		}
		chain := "ethereum"
		if i%3 == 0 {
			chain = "base"
		}
		m := &eventsv1.Transfer{
			Id: fmt.Sprintf("0x%064x_0", 1000+i), Chain: chain, TransactionHash: fmt.Sprintf("0x%064x", 1000+i),
			BlockHash: tw.BlockHash(chain, 1000+i), BlockNumber: uint64(2000 + i), BlockTimeMs: tw.D0.Add(at).UnixMilli(),
			From: from, To: to, TokenId: "ethereum", TokenName: "Ether", TokenSymbol: "ETH", TokenDecimals: 18,
			Amount: tw.Units(fmt.Sprint(i%7+1), 18), Type: eventsv1.TransferType_TRANSFER_TYPE_EXTERNAL,
		}
		if i%2 == 0 {
			m.TokenAddress, m.TokenId, m.TokenName, m.TokenSymbol, m.TokenDecimals = tw.USDC, "usd-coin", "USD Coin", "USDC", 6
			m.Amount, m.Type = tw.Units(fmt.Sprint(i%13+1), 6), eventsv1.TransferType_TRANSFER_TYPE_TOKEN
		}
		if i%11 != 0 {
			u := float64(i%17)*13.37 + 1.01
			m.HistoricalUsd = &u
		}
		out = append(out, m)
		if i%10 == 0 {
			// A cluster of three more a second apart: a window of a few seconds holds some.
			for j, pair := range [][2]string{{tw.U1, tw.H1}, {tw.D1, tw.U1}, {people[6], tw.D1}} {
				c := proto.Clone(m).(*eventsv1.Transfer)
				n := 100000 + i*10 + j
				c.Id, c.TransactionHash, c.BlockHash = fmt.Sprintf("0x%064x_0", n), fmt.Sprintf("0x%064x", n), tw.BlockHash(chain, n)
				c.BlockNumber, c.BlockTimeMs, c.From, c.To = uint64(2000+n), m.BlockTimeMs+int64(j+1)*1100, pair[0], pair[1]
				out = append(out, c)
			}
		}
	}
	return out
}

// denseRouter loads the world's attributions and denseTransfers into a database of their own
// and returns a router over it with the default plans (small sets listed), and one that builds a
// router planning every set as a large one (the attribution model probed or hashed), with
// every group live (entity pair rows, group rollups) when live is set. stmts records the
// statements run on the database.
func denseRouter(t *testing.T, stmts *statementLog) (small *gin.Engine, large func(live bool) *gin.Engine) {
	t.Helper()
	e := world(t) // the user-labels service the routers render with
	ctx := context.Background()
	dbURL, drop, err := pgtest.CreateDatabase(ctx, "exactwin")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = stmts
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close(); drop() })
	if err := pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil); err != nil {
		t.Fatal(err)
	}
	o := store.DefaultOptions()
	o.InlineRollups = true
	st := store.New(pool, o)
	h := events.Handlers{W: st, Log: slog.New(slog.DiscardHandler)}
	if err := h.Attributions(ctx, tw.Msgs(tw.Attributions())); err != nil {
		t.Fatal(err)
	}
	if err := h.Transfers(ctx, tw.Msgs(denseTransfers())); err != nil {
		t.Fatal(err)
	}
	router := func(st *store.Store) *gin.Engine {
		cs, _ := chains.NewSet(nil)
		r := httpx.NewEngine(httpx.EngineOptions{Service: "transfers"})
		r.Use(httpx.IdentityMiddleware(httpx.NewSigner(secret)))
		svchttp.Register(r, app.New(st, e.render, cs), query.Parser{Chains: cs, Now: func() time.Time { return tw.Now }})
		return r
	}
	return router(st), func(live bool) *gin.Engine {
		lo := o
		lo.ListSetMax, lo.LateralMax = 0, 0
		if live {
			lo.GroupMin = 0
		}
		lst := store.New(pool, lo)
		if err := lst.Rematerialize(ctx); err != nil {
			t.Fatal(err)
		}
		return router(lst)
	}
}

// statementLog records the statements run over a pool.
type statementLog struct {
	mu   sync.Mutex
	sqls []string
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sqls = append(l.sqls, d.SQL)
	return ctx
}

func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// since returns the statements recorded after the first n.
func (l *statementLog) since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.sqls[n:])
}

func (l *statementLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sqls)
}

// A window on bucket boundaries is read from the rollups alone, as before windows were exact:
// no statement reads transfer rows (transfers.transfers; an entity's pair rows are a rollup of
// them). A window that cuts a bucket reads the rows of the cut hours.
func TestAlignedWindowsReadRollupsOnly(t *testing.T) {
	stmts := &statementLog{}
	small, large := denseRouter(t, stmts)
	aligned := "timeGte=" + jsonInt(tw.D0.Add(24*time.Hour).UnixMilli()) + "&timeLte=" + jsonInt(tw.D0.Add(48*time.Hour-time.Millisecond).UnixMilli())
	cut := "timeGte=" + jsonInt(tw.D0.Add(24*time.Hour+time.Second).UnixMilli()) + "&timeLte=" + jsonInt(tw.D0.Add(48*time.Hour-time.Millisecond).UnixMilli())
	for _, r := range []*gin.Engine{small, large(false), large(true)} {
		for _, path := range []string{
			"/counterparties/address/" + tw.U1 + "?", "/counterparties/entity/binance?",
			"/flow/address/" + tw.U1 + "?", "/flow/entity/binance?",
			"/transfers/histogram?granularity=1h&base=binance&", "/transfers/histogram?granularity=1d&base=" + tw.U1 + "&",
			"/transfers/histogram/simple?base=binance&", "/transfers/histogram?granularity=1h&",
		} {
			for _, c := range []struct {
				window string
				rows   bool
			}{{aligned, false}, {cut, true}} {
				n := stmts.len()
				client{r, &bob}.get(t, path+c.window)
				read := false
				for _, q := range stmts.since(n) {
					read = read || strings.Contains(q, "transfers.transfers")
				}
				if read != c.rows {
					t.Errorf("%s: read rows %v, want %v", path+c.window, read, c.rows)
				}
			}
		}
	}
}

// denseRow is what a test reads of a /transfers row.
type denseRow struct {
	at       time.Time
	chain    string
	from, to string
	usd      decimal.Decimal // as the rollups sum it (pgUSD)
}

// pgUSD is a transfer's historicalUSD as the rollups and the cut rows sum it: PostgreSQL's
// usd::numeric, the float8 to 15 significant digits (0 without a price).
func pgUSD(v *float64) decimal.Decimal {
	if v == nil {
		return decimal.Zero
	}
	return decimal.RequireFromString(strconv.FormatFloat(*v, 'g', 15, 64))
}

// exactWindow is a window (offsets from the world's first day; a negative one is open) and a
// subject: an address or binance.
type exactWindow struct {
	name     string
	from, to time.Duration
}

func (w exactWindow) params() string {
	var p []string
	if w.from >= 0 {
		p = append(p, "timeGte="+jsonInt(tw.D0.Add(w.from).UnixMilli()))
	}
	if w.to >= 0 {
		p = append(p, "timeLte="+jsonInt(tw.D0.Add(w.to).UnixMilli()))
	}
	return strings.Join(p, "&")
}

// bounds are the window's inclusive bounds (open ends: far past and future).
func (w exactWindow) bounds() (time.Time, time.Time) {
	lo, hi := tw.D0.Add(-1000*time.Hour), tw.D0.Add(1000*time.Hour)
	if w.from >= 0 {
		lo = tw.D0.Add(w.from)
	}
	if w.to >= 0 {
		hi = tw.D0.Add(w.to)
	}
	return lo, hi
}

// client is a router and the caller it is asked as.
type client struct {
	r   *gin.Engine
	who *httpx.Identity
}

func (c client) get(t *testing.T, path string) resp {
	t.Helper()
	res := (&env{router: c.r}).get(t, c.who, path)
	if res.status != 200 {
		t.Fatalf("%s: %d %s", path, res.status, res.body)
	}
	return res
}

// decode reads path's answer into out, which must hold every field of it.
func (c client) decode(t *testing.T, path string, out any) {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(string(c.get(t, path).body)))
	d.DisallowUnknownFields()
	if err := d.Decode(out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// transfersOf reads every /transfers row of a query, page by page.
func transfersOf(t *testing.T, c client, q string) []denseRow {
	t.Helper()
	var rows []denseRow
	for off := 0; ; off += 1000 {
		var page struct {
			Transfers []struct {
				BlockTimestamp string
				Chain          string
				FromAddress    struct{ Address string }
				ToAddress      struct{ Address string }
				HistoricalUSD  *float64
			}
			Count int
		}
		path := "/transfers?" + q + fmt.Sprintf("&limit=1000&offset=%d", off)
		if err := json.Unmarshal(c.get(t, path).body, &page); err != nil {
			t.Fatal(err)
		}
		for _, x := range page.Transfers {
			at, err := time.Parse(time.RFC3339Nano, x.BlockTimestamp)
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, denseRow{at: at, chain: x.Chain, from: x.FromAddress.Address, to: x.ToAddress.Address, usd: pgUSD(x.HistoricalUSD)})
		}
		if off+1000 >= page.Count {
			if len(rows) != page.Count {
				t.Fatalf("%s: read %d rows, count %d", q, len(rows), page.Count)
			}
			return rows
		}
	}
}

// exactWindows cut hours and days in every way, and align on them.
var exactWindows = []exactWindow{
	{"seconds", 5*time.Hour + 3*time.Minute + 11*time.Second + 500*time.Millisecond, 5*time.Hour + 3*time.Minute + 14*time.Second + 500*time.Millisecond},
	{"minutes", 5*time.Hour + 10*time.Minute, 5*time.Hour + 50*time.Minute + 30*time.Second},
	{"crossing an hour", 5*time.Hour + 47*time.Minute + 12*time.Second, 6*time.Hour + 13*time.Minute + 5*time.Second + 500*time.Millisecond},
	{"hours", 5*time.Hour + 47*time.Minute + 12*time.Second, 9*time.Hour + 3*time.Minute},
	{"crossing a day", 22*time.Hour + 40*time.Minute + 1*time.Millisecond, 26*time.Hour + 20*time.Minute + 30*time.Second},
	{"days", 3*time.Hour + 5*time.Minute, 49*time.Hour + 30*time.Minute + 999*time.Millisecond},
	{"open start", -1, 30*time.Hour + 12*time.Minute + 7*time.Second},
	{"open end", 30*time.Hour + 12*time.Minute + 7*time.Second, -1},
	{"on the lower bound", 5*time.Hour + 20*time.Minute + 19*time.Second + 640*time.Millisecond, 6 * time.Hour},
	{"aligned hours", 5 * time.Hour, 9*time.Hour - time.Millisecond},
	{"aligned days", 0, 48*time.Hour - time.Millisecond},
}

// Unaligned windows on /counterparties, /flow and the histograms count exactly the transfers
// /transfers counts in them (its rows with the same filters, summed here), for an address and an
// entity, with groups read through the attribution model and live; aligned windows as well.
func TestExactWindows(t *testing.T) {
	small, large := denseRouter(t, &statementLog{})
	for _, rc := range []struct {
		name string
		r    func() *gin.Engine
	}{
		{"small sets", func() *gin.Engine { return small }},
		{"large sets", func() *gin.Engine { return large(false) }},
		{"live groups", func() *gin.Engine { return large(true) }},
	} {
		r := rc.r()
		for _, w := range exactWindows {
			// alice's binance holds the fund too (her only_add addition): an entity and a listed
			// address.
			for _, sub := range []struct {
				name, kind, id string
				who            *httpx.Identity
			}{{"address", "address", tw.U1, &alice}, {"entity", "entity", "binance", &bob}, {"entity and addition", "entity", "binance", &alice}} {
				c := client{r, sub.who}
				t.Run(rc.name+"/"+w.name+"/"+sub.name, func(t *testing.T) {
					in := transfersOf(t, c, "base="+sub.id+"&flow=in&"+w.params())
					out := transfersOf(t, c, "base="+sub.id+"&flow=out&"+w.params())
					all := transfersOf(t, c, "base="+sub.id+"&"+w.params())
					if len(in)+len(out) == 0 {
						t.Fatalf("the window holds no transfer of %s", sub.id)
					}
					checkCounterparties(t, c, sub.kind, sub.id, w.params(), in, out)
					checkFlow(t, c, sub.kind, sub.id, w.params(), in, out)
					// A chain and a token on the rollups' and the rows' parts alike.
					q := w.params() + "&chains=ethereum&tokens=" + tw.USDC
					qin, qout := transfersOf(t, c, "base="+sub.id+"&flow=in&"+q), transfersOf(t, c, "base="+sub.id+"&flow=out&"+q)
					checkCounterparties(t, c, sub.kind, sub.id, q, qin, qout)
					checkHistogram(t, c, "/transfers/histogram?granularity=1d&flow=out&base="+sub.id+"&"+q, "1d", qout)
					q = w.params() + "&chains=base"
					qin, qout = transfersOf(t, c, "base="+sub.id+"&flow=in&"+q), transfersOf(t, c, "base="+sub.id+"&flow=out&"+q)
					checkFlow(t, c, sub.kind, sub.id, q, qin, qout)
					for _, g := range grans(w) {
						checkHistogram(t, c, "/transfers/histogram?granularity="+g+"&base="+sub.id+"&"+w.params(), g, all)
						checkHistogram(t, c, "/transfers/histogram?granularity="+g+"&flow=in&base="+sub.id+"&"+w.params(), g, in)
					}
					checkHistogram(t, c, "/transfers/histogram/simple?base="+sub.id+"&"+w.params(), "1d", all)
					// A USD range reads the rows (or an entity's pair rows) of the exact window.
					ranged := transfersOf(t, c, "base="+sub.id+"&usdGte=50&"+w.params())
					checkHistogram(t, c, "/transfers/histogram?granularity=1d&usdGte=50&base="+sub.id+"&"+w.params(), "1d", ranged)
				})
			}
			c := client{r, &bob}
			t.Run(rc.name+"/"+w.name+"/no base", func(t *testing.T) {
				all := transfersOf(t, c, w.params())
				checkHistogram(t, c, "/transfers/histogram?granularity=1d&"+w.params(), "1d", all)
				checkHistogram(t, c, "/transfers/histogram?granularity=1d&chains=base&"+w.params(), "1d", transfersOf(t, c, "chains=base&"+w.params()))
				g := grans(w)[0]
				checkHistogram(t, c, "/transfers/histogram?granularity="+g+"&from=binance&"+w.params(), g, transfersOf(t, c, "from=binance&"+w.params()))
				checkHistogram(t, c, "/transfers/histogram?granularity="+g+"&from=binance&to=!coinbase&"+w.params(), g, transfersOf(t, c, "from=binance&to=!coinbase&"+w.params()))
				checkHistogram(t, c, "/transfers/histogram?granularity="+g+"&from="+tw.U1+"&"+w.params(), g, transfersOf(t, c, "from="+tw.U1+"&"+w.params()))
			})
		}
	}
}

// grans are the granularities a window takes (1h needs a start).
func grans(w exactWindow) []string {
	if w.from < 0 {
		return []string{"1d"}
	}
	return []string{"1h", "1d"}
}

type cpWant struct {
	n        int64
	usd      decimal.Decimal
	in, out  bool
	chainsOn map[string]bool
}

// checkCounterparties compares the counterparties of a subject under filters q (a window, chains,
// tokens) with its transfers in (flow in) and out (flow out) under q.
func checkCounterparties(t *testing.T, cl client, kind, id, q string, in, out []denseRow) {
	t.Helper()
	for _, flow := range []string{"in", "out", "either"} {
		want := map[[2]string]*cpWant{}
		add := func(rows []denseRow, isIn bool) {
			for _, x := range rows {
				cp := x.to
				if isIn {
					cp = x.from
				}
				k := [2]string{x.chain, cp}
				c := want[k]
				if c == nil {
					c = &cpWant{}
					want[k] = c
				}
				c.n++
				c.usd = c.usd.Add(x.usd)
				c.in, c.out = c.in || isIn, c.out || !isIn
			}
		}
		if flow != "out" {
			add(in, true)
		}
		if flow != "in" {
			add(out, false)
		}
		var got map[string][]struct {
			Address          struct{ Address string }
			Chains           []string
			Flow             string
			TransactionCount int64
			USD              float64
		}
		path := "/counterparties/" + kind + "/" + id + "?limit=1000&flow=" + flow + "&" + q
		if err := json.Unmarshal(cl.get(t, path).body, &got); err != nil {
			t.Fatal(err)
		}
		seen := 0
		for chain, cps := range got {
			for i, c := range cps {
				seen++
				wc := want[[2]string{chain, c.Address.Address}]
				if wc == nil {
					t.Errorf("%s: %s %s: no transfers in /transfers", path, chain, c.Address.Address)
					continue
				}
				wantFlow := map[[2]bool]string{{true, true}: "either", {true, false}: "in", {false, true}: "out"}[[2]bool{wc.in, wc.out}]
				if c.TransactionCount != wc.n || c.USD != wc.usd.InexactFloat64() || c.Flow != wantFlow {
					t.Errorf("%s: %s %s: %d transfers $%v %s, /transfers %d $%v %s", path, chain, c.Address.Address,
						c.TransactionCount, c.USD, c.Flow, wc.n, wc.usd.InexactFloat64(), wantFlow)
				}
				if i > 0 && cps[i-1].USD < c.USD {
					t.Errorf("%s: %s not ordered by usd", path, chain)
				}
			}
		}
		if seen != len(want) {
			t.Errorf("%s: %d counterparties, /transfers has %d", path, seen, len(want))
		}
	}
}

type flowDay struct {
	Time                                string
	Inflow, Outflow                     float64
	CumulativeInflow, CumulativeOutflow float64
}

// checkFlow compares the flow of a subject under filters q (a window, chains) with its transfers
// in (flow in) and out (flow out) under q.
func checkFlow(t *testing.T, c client, kind, id, q string, in, out []denseRow) {
	t.Helper()
	type sums struct {
		n       int
		in, out decimal.Decimal
	}
	days := map[[2]string]*sums{}
	add := func(rows []denseRow, isIn bool) {
		for _, x := range rows {
			k := [2]string{x.chain, app.Timestamp(x.at.Truncate(24 * time.Hour))}
			s := days[k]
			if s == nil {
				s = &sums{}
				days[k] = s
			}
			s.n++
			if isIn {
				s.in = s.in.Add(x.usd)
			} else {
				s.out = s.out.Add(x.usd)
			}
		}
	}
	add(in, true)
	add(out, false)
	type chainDay struct {
		time string
		s    *sums
	}
	byChain := map[string][]chainDay{}
	for k, s := range days {
		byChain[k[0]] = append(byChain[k[0]], chainDay{k[1], s})
	}
	// Every figure is the nearest float to the exact sum, the cumulative ones included.
	want := map[string][]flowDay{}
	for c, ds := range byChain {
		slices.SortFunc(ds, func(a, b chainDay) int { return strings.Compare(a.time, b.time) })
		var ci, co decimal.Decimal
		for _, d := range ds {
			ci, co = ci.Add(d.s.in), co.Add(d.s.out)
			want[c] = append(want[c], flowDay{Time: d.time, Inflow: d.s.in.InexactFloat64(), Outflow: d.s.out.InexactFloat64(),
				CumulativeInflow: ci.InexactFloat64(), CumulativeOutflow: co.InexactFloat64()})
		}
	}
	var got map[string][]flowDay
	path := "/flow/" + kind + "/" + id + "?" + q
	c.decode(t, path, &got)
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("%s:\n got %s\nwant %s", path, gb, wb)
	}
}

func checkHistogram(t *testing.T, c client, path, g string, rows []denseRow) {
	t.Helper()
	step := time.Hour
	if g == "1d" {
		step = 24 * time.Hour
	}
	type bucket struct {
		Time  string
		Count int64
		USD   float64
	}
	sums := map[string]*bucket{}
	usd := map[string]decimal.Decimal{}
	for _, x := range rows {
		k := app.Timestamp(x.at.Truncate(step))
		if sums[k] == nil {
			sums[k] = &bucket{Time: k}
		}
		sums[k].Count++
		usd[k] = usd[k].Add(x.usd)
	}
	want := []bucket{}
	for k, b := range sums {
		b.USD = usd[k].InexactFloat64() // the nearest float to the exact sum
		want = append(want, *b)
	}
	slices.SortFunc(want, func(a, b bucket) int { return strings.Compare(a.Time, b.Time) })
	var got []bucket
	c.decode(t, path, &got)
	if got == nil {
		got = []bucket{}
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("%s:\n got %s\nwant %s", path, gb, wb)
	}
}

// A window that cuts buckets but holds the same transfers as an aligned one (it starts just
// after the last transfer before the aligned start and ends just before the first one after
// its end) answers the same bodies, byte for byte: the rollups' and the rows' parts sum to the
// figures the rollups alone give.
func TestCutWindowsAnswerAsAligned(t *testing.T) {
	small, large := denseRouter(t, &statementLog{})
	var times []time.Time
	for _, m := range denseTransfers() {
		times = append(times, time.UnixMilli(m.BlockTimeMs).UTC())
	}
	params := func(from, to time.Time) string {
		return "timeGte=" + jsonInt(from.UnixMilli()) + "&timeLte=" + jsonInt(to.UnixMilli())
	}
	for _, r := range []*gin.Engine{small, large(false), large(true)} {
		for _, w := range []exactWindow{exactWindows[len(exactWindows)-2], exactWindows[len(exactWindows)-1]} {
			from, to := w.bounds()
			cutFrom, cutTo := from.Add(-30*time.Minute-7*time.Millisecond), to.Add(30*time.Minute+7*time.Millisecond) // unaligned on hours
			for _, at := range times {
				if at.Before(from) && !at.Before(cutFrom) {
					cutFrom = at.Add(time.Millisecond)
				}
				if at.After(to) && !at.After(cutTo) {
					cutTo = at.Add(-time.Millisecond)
				}
			}
			if cutFrom.Equal(from) || cutTo.Equal(to) {
				t.Fatalf("%s: a transfer at a bound; no cut window holds the same transfers", w.name)
			}
			aligned, cut := params(from, to), params(cutFrom, cutTo)
			for _, p := range []struct {
				who  *httpx.Identity
				path string
			}{
				{&alice, "/counterparties/address/" + tw.U1 + "?limit=1000&flow=either&"},
				{&bob, "/counterparties/entity/binance?limit=1000&flow=in&"},
				{&alice, "/counterparties/entity/binance?limit=1000&flow=out&"},
				{&alice, "/flow/address/" + tw.U1 + "?"},
				{&bob, "/flow/entity/binance?"},
				{&alice, "/flow/entity/binance?"},
				{&bob, "/transfers/histogram?granularity=1h&base=binance&"},
				{&alice, "/transfers/histogram?granularity=1d&flow=in&base=binance&"},
				{&bob, "/transfers/histogram?granularity=1d&flow=out&base=" + tw.U1 + "&"},
				{&bob, "/transfers/histogram/simple?base=binance&"},
				{&bob, "/transfers/histogram?granularity=1h&"},
				{&bob, "/transfers/histogram?granularity=1d&from=binance&to=!coinbase&"},
				{&bob, "/transfers/histogram?granularity=1d&usdGte=50&base=binance&"},
			} {
				c := client{r, p.who}
				a, b := c.get(t, p.path+aligned).body, c.get(t, p.path+cut).body
				if string(a) != string(b) {
					t.Errorf("%s: cut window %s answers\n%s\naligned %s\n%s", p.path, cut, b, aligned, a)
				}
			}
		}
	}
}
