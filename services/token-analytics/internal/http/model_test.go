package http

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/internal/events"
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
)

// The model-based test: random sequences of transfer batches (open hours, late copies into
// closed hours, redeliveries, mixed batches), reorgs and reorgs back, relabels, swaps, deposit
// addresses and their exchanges' entity records, hour closes, clock moves and restarts of the
// kept top_flow sums, on a small world, with
// /token/top_flow, /token/volume and /token/top compared after every few steps with a plain
// in-memory model of the rules of
// docs/token-analytics.md ("Flow rollups", "Natural ids", "Routes"): of every natural id the
// counted copy (none when all its blocks are orphaned, else the one counted already if its block
// is not orphaned, else the first by block hash), each counted transfer its receiver's in and
// its sender's out, classed by the current class of the counterparty (cex or dex by its
// attributed entity's type, dex as a pool, else for a deposit address its exchange's current
// type: a cex's deposit address's receipts CEX inflow and its payments taken out of it), in the
// hour of its block. top_flow is asked of a store keeping sums (the kept path,
// whose answers must equal top_flow.sql's whole bodies) and of one keeping none (top_flow.sql).

var (
	mwChains = []string{"base", "ethereum"}
	// mwTokens are the world's pricing ids with their contract and decimals per chain.
	mwTokens = []struct {
		id, symbol string
		contract   map[string]string
		decimals   map[string]int32
	}{
		{"tka", "TKA", map[string]string{"ethereum": mwAddr(0xf1), "base": mwAddr(0xf1)}, map[string]int32{"ethereum": 18, "base": 18}},
		{"tkb", "TKB", map[string]string{"ethereum": mwAddr(0xf2), "base": mwAddr(0xf3)}, map[string]int32{"ethereum": 6, "base": 18}},
		{"tkc", "TKC", map[string]string{"ethereum": mwAddr(0xf4), "base": mwAddr(0xf5)}, map[string]int32{"ethereum": 18, "base": 8}},
	}
	mwTypes = []string{"cex", "dex", "fund", ""}
)

func mwAddr(i int) string { return fmt.Sprintf("0x%040x", i) }

// mwExchanges are the exchange entities deposit addresses belong to, with the holder that is
// their wallet: exa and exb are cex from the start, exc is named by no record until one arrives.
var mwExchanges = []struct {
	id     string
	wallet int
}{{"exa", 0}, {"exb", 1}, {"exc", 13}}

// mwDepositHolder is one of the holders that may be deposit addresses (6..11: 6 and 7 are also
// relabeled, all may become pools).
func (w *mwWorld) mwDepositHolder() string { return mwHolder(6 + w.r.IntN(6)) }

// mwHolder is the world's i-th address (0..14).
func mwHolder(i int) string { return mwAddr(0xa00 + i) }

// mwCopy is one copy of a transfer: its natural id in one block.
type mwCopy struct {
	chain, id, block, token, from, to string
	at                                time.Time
	usd, units                        float64 // tenths, not exact in binary: the model sums them as integers (tenths)
	hasUSD                            bool
	decimals                          int32
}

// mwClass is what the stored attribution of an address says (set: one is stored, not untagged).
type mwClass struct {
	typ     string // its entity's type as the attribution named it ("" no entity)
	entity  string // its entity's id ("" no entity)
	deposit string // the entity whose deposit address it is ("" none)
	version int64
	set     bool
	pool    bool // a swap's pool contract: dex unless its entity is a cex
}

// mwEntity is an entity record an attribution carries (as its entity or its prediction).
type mwEntity struct {
	id, typ string
	version int64
}

// mwAttr is an intel.attributions.v1 record of addr (tombstone: its untag).
type mwAttr struct {
	addr              string
	tombstone         bool
	version           int64
	entity, predicted *mwEntity
	deposit           string
}

func (a mwAttr) String() string {
	if a.tombstone {
		return "untag " + a.addr[len(a.addr)-3:]
	}
	s := fmt.Sprintf("%s v%d", a.addr[len(a.addr)-3:], a.version)
	for _, e := range []struct {
		name string
		e    *mwEntity
	}{{"entity", a.entity}, {"predicted", a.predicted}} {
		if e.e != nil {
			s += fmt.Sprintf(" %s %s:%s@%d", e.name, e.e.id, e.e.typ, e.e.version)
		}
	}
	if a.deposit != "" {
		s += " deposit of " + a.deposit
	}
	return s
}

// mwModel is what the rules say the routes answer, from the messages delivered.
type mwModel struct {
	copies   map[[3]string]mwCopy // chain, id, block
	orphaned map[[2]string]bool   // chain, block
	counted  map[[2]string]string // chain, id → block of the counted copy
	classes  map[string]mwClass   // evm address
	entities map[string]mwEntity  // entity id → the record of the highest version
}

func newModel() *mwModel {
	return &mwModel{copies: map[[3]string]mwCopy{}, orphaned: map[[2]string]bool{}, counted: map[[2]string]string{},
		classes: map[string]mwClass{}, entities: map[string]mwEntity{}}
}

// settle applies the counting rule to every id: ids untouched by the last message keep their
// counted copy (its block's status did not change), so settling all of them is settling those.
func (m *mwModel) settle() {
	byID := map[[2]string][]string{}
	for k := range m.copies {
		byID[[2]string{k[0], k[1]}] = append(byID[[2]string{k[0], k[1]}], k[2])
	}
	for id, blocks := range byID {
		if b, ok := m.counted[id]; ok && !m.orphaned[[2]string{id[0], b}] {
			continue
		}
		delete(m.counted, id)
		slices.Sort(blocks)
		for _, b := range blocks {
			if !m.orphaned[[2]string{id[0], b}] {
				m.counted[id] = b
				break
			}
		}
	}
}

func (m *mwModel) deliver(cs []mwCopy) {
	for _, c := range cs {
		k := [3]string{c.chain, c.id, c.block}
		if _, ok := m.copies[k]; !ok {
			m.copies[k] = c
		}
	}
	m.settle()
}

func (m *mwModel) reorg(chain string, orphaned, canonical []string) {
	for _, b := range orphaned {
		m.orphaned[[2]string{chain, b}] = true
	}
	for _, b := range canonical {
		delete(m.orphaned, [2]string{chain, b})
	}
	m.settle()
}

// attribute applies one attribution record: its entity records count whatever its own version
// (the highest entity version per id wins, version 0 applies whatever is stored), the
// attribution unless it is older than the stored one (an untag clears it, so whatever comes
// next counts).
func (m *mwModel) attribute(a mwAttr) {
	for _, e := range []*mwEntity{a.entity, a.predicted} {
		if e == nil {
			continue
		}
		if o, ok := m.entities[e.id]; !ok || e.version >= o.version || e.version == 0 {
			m.entities[e.id] = *e
		}
	}
	c := m.classes[a.addr]
	if a.tombstone {
		m.classes[a.addr] = mwClass{pool: c.pool}
		return
	}
	if c.set && a.version < c.version && a.version != 0 {
		return
	}
	n := mwClass{deposit: a.deposit, version: a.version, set: true, pool: c.pool}
	if a.entity != nil {
		n.typ, n.entity = a.entity.typ, a.entity.id
	}
	m.classes[a.addr] = n
}

// class is what addr counts as: cex or dex by its attributed entity's current type (of the
// highest entity version, whichever address's record carried it; dex also as a pool), else, for
// a deposit address (no entity), cex_deposit when its exchange's current type is cex, dex when
// dex, nothing while no record named the exchange.
func (m *mwModel) class(addr string) string {
	c := m.classes[addr]
	typ := c.typ
	if e, ok := m.entities[c.entity]; ok && c.entity != "" {
		typ = e.typ
	}
	switch {
	case typ == "cex":
		return "cex"
	case typ == "dex" || c.pool:
		return "dex"
	case typ == "" && c.deposit != "":
		switch m.entities[c.deposit].typ {
		case "cex":
			return "cex_deposit"
		case "dex":
			return "dex"
		}
	}
	return ""
}

// counted are the counted copies.
func (m *mwModel) countedCopies() []mwCopy {
	var out []mwCopy
	for id, b := range m.counted {
		out = append(out, m.copies[[3]string{id[0], id[1], b}])
	}
	return out
}

type mwDep struct{ chain, token string }

func depsOf(id string, chainsOnly []string) []mwDep {
	var out []mwDep
	for _, t := range mwTokens {
		if t.id != id {
			continue
		}
		for _, c := range mwChains {
			if len(chainsOnly) == 0 || slices.Contains(chainsOnly, c) {
				out = append(out, mwDep{c, t.contract[c]})
			}
		}
	}
	return out
}

// mwFlowRow is a top_flow row as compared: the address, its chain, its entity's type and sums.
type mwFlowRow struct {
	Chain, Address, EntityType, Deposit string
	InUSD, InValue, OutUSD, OutValue    float64
	total                               int64 // the model's in + out USD, in tenths
}

func (m *mwModel) topFlow(deps []mwDep, from time.Time) []mwFlowRow {
	sums := map[[2]string]*[4]int64{} // in USD, in units, out USD, out units, in tenths
	at := func(chain, addr string) *[4]int64 {
		k := [2]string{chain, addr}
		if sums[k] == nil {
			sums[k] = &[4]int64{}
		}
		return sums[k]
	}
	for _, c := range m.countedCopies() {
		if !slices.Contains(deps, mwDep{c.chain, c.token}) || c.at.Before(from) {
			continue
		}
		in, out := at(c.chain, c.to), at(c.chain, c.from)
		in[0], in[1] = in[0]+tenths(c.usd), in[1]+tenths(c.units)
		out[2], out[3] = out[2]+tenths(c.usd), out[3]+tenths(c.units)
	}
	rows := []mwFlowRow{}
	for k, t := range sums {
		if *t == [4]int64{} { // moved nothing: no flow to list
			continue
		}
		r := mwFlowRow{Chain: k[0], Address: k[1], InUSD: fromTenths(t[0]), InValue: fromTenths(t[1]),
			OutUSD: fromTenths(t[2]), OutValue: fromTenths(t[3]), total: t[0] + t[2]}
		if c := m.classes[k[1]]; c.set {
			r.EntityType, r.Deposit = c.typ, c.deposit
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b mwFlowRow) int {
		return cmp.Or(cmp.Compare(b.total, a.total), strings.Compare(a.Chain, b.Chain), strings.Compare(a.Address, b.Address))
	})
	return rows
}

// tenths is a world's amount (a whole number of tenths) as that number: the model sums amounts
// exactly, so an amount whose exact value is 0 is 0 in the model.
func tenths(x float64) int64 { return int64(math.Round(x * 10)) }

func fromTenths(n int64) float64 { return float64(n) / 10 }

// near is whether a route's figure got is the model's want: exactly 0 when want is (a sum whose
// transfers were undone, or whose exact value is 0, shows nothing), else equal up to the last
// bits a float8 sum in another order leaves.
func near(got, want float64) bool {
	if want == 0 || math.IsNaN(want) {
		return got == want || math.IsNaN(got) && math.IsNaN(want)
	}
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

// mwBucket is a /token/volume bucket.
type mwBucket struct {
	Time                             time.Time
	InUSD, InValue, OutUSD, OutValue float64
}

var mwVolumeOrigin = time.Date(2000, 1, 3, 0, 0, 0, 0, time.UTC) // a Monday

func (m *mwModel) volume(deps []mwDep, now time.Time, size, window time.Duration) []mwBucket {
	bucket := func(t time.Time) time.Time { return mwVolumeOrigin.Add(t.Sub(mwVolumeOrigin) / size * size) }
	from, to := bucket(now.Add(-window)), bucket(now).Add(size)
	out := []mwBucket{}
	for t := from; t.Before(to); t = t.Add(size) {
		out = append(out, mwBucket{Time: t})
	}
	sums := make([][2]int64, len(out)) // USD, units, in tenths
	for _, c := range m.countedCopies() {
		if !slices.Contains(deps, mwDep{c.chain, c.token}) {
			continue
		}
		h := c.at.Truncate(time.Hour)
		if c.at.Before(now.Add(-window)) || !h.Before(to) { // exactly the window's transfers
			continue
		}
		sums[h.Sub(from)/size][0] += tenths(c.usd)
		sums[h.Sub(from)/size][1] += tenths(c.units)
	}
	for i, t := range sums {
		out[i].InUSD, out[i].OutUSD, out[i].InValue, out[i].OutValue = fromTenths(t[0]), fromTenths(t[0]), fromTenths(t[1]), fromTenths(t[1])
	}
	return out
}

// mwFlows are a window's /token/top figures, in tenths.
type mwFlows struct{ volume, cexIn, cexOut, dexIn, dexOut int64 }

func (m *mwModel) flows(deps []mwDep, from, to time.Time) mwFlows {
	var f mwFlows
	for _, c := range m.countedCopies() {
		h := c.at.Truncate(time.Hour)
		if !slices.Contains(deps, mwDep{c.chain, c.token}) || h.Before(from) || !h.Before(to) {
			continue
		}
		usd := tenths(c.usd)
		f.volume += usd
		switch m.class(c.to) {
		case "cex", "cex_deposit": // a customer's deposit
			f.cexIn += usd
		case "dex":
			f.dexIn += usd
		}
		switch m.class(c.from) {
		case "cex":
			f.cexOut += usd
		case "cex_deposit": // a sweep into the exchange, whose wallet counts it as received
			f.cexIn -= usd
		case "dex":
			f.dexOut += usd
		}
	}
	return f
}

// metric is the value /token/top ranks by (docs: "orderByAgg").
func (f mwFlows) metric(agg string) float64 {
	net := f.cexIn + f.dexIn - f.cexOut - f.dexOut
	switch agg {
	case "volume":
		return fromTenths(f.volume)
	case "inflowCex":
		return fromTenths(f.cexIn)
	case "outflowDex":
		return fromTenths(f.dexOut)
	case "netflowCex":
		return fromTenths(f.cexIn - f.cexOut)
	case "netflow":
		return fromTenths(net)
	case "netflowVolumeRatio":
		if f.volume == 0 {
			return 0
		}
		return float64(net) / float64(f.volume)
	}
	panic(agg)
}

var mwAggs = []string{"volume", "inflowCex", "outflowDex", "netflowCex", "netflow", "netflowVolumeRatio"}

// mwTopRow is a /token/top row as compared.
type mwTopRow struct {
	ID                string
	Current, Previous [6]float64 // volume, cex in, cex out, dex in, dex out, netflow
	key               float64    // the model's ranking value (NaN: undefined)
}

func (f mwFlows) row(k float64) [6]float64 {
	return [6]float64{fromTenths(f.volume) * k, fromTenths(f.cexIn) * k, fromTenths(f.cexOut) * k, fromTenths(f.dexIn) * k,
		fromTenths(f.dexOut) * k, fromTenths(f.cexIn+f.dexIn-f.cexOut-f.dexOut) * k}
}

// top is the ranking of /token/top?timeframe=tf&orderByAgg=agg&orderByDesc=desc&
// orderByPercent=percent&numReferencePeriods=n (chains narrowing the deployments): the current
// window ends with the clock's hour, the n windows before it are the reference, previous their
// mean; a percent change against 0 comes last either way; ties by pricing id.
func (m *mwModel) top(now time.Time, tf time.Duration, n int, agg string, desc, percent bool, chainsOnly []string) []mwTopRow {
	curTo := now.Truncate(time.Hour).Add(time.Hour)
	curFrom := curTo.Add(-tf)
	refFrom := curFrom.Add(-time.Duration(n) * tf)
	var rows []mwTopRow
	for _, t := range mwTokens {
		deps := depsOf(t.id, chainsOnly)
		cur, prev := m.flows(deps, curFrom, curTo), m.flows(deps, refFrom, curFrom)
		key := cur.metric(agg)
		if percent {
			pf := prev.metric(agg) // a ratio is the same of the mean
			if agg != "netflowVolumeRatio" {
				pf /= float64(n)
			}
			key = math.NaN()
			if pf != 0 {
				key = (cur.metric(agg) - pf) / math.Abs(pf)
			}
		}
		rows = append(rows, mwTopRow{ID: t.id, Current: cur.row(1), Previous: prev.row(1 / float64(n)), key: key})
	}
	key := func(r mwTopRow) float64 { return r.key }
	slices.SortStableFunc(rows, func(a, b mwTopRow) int {
		ka, kb := key(a), key(b)
		switch {
		case math.IsNaN(ka) && math.IsNaN(kb):
		case math.IsNaN(ka):
			return 1
		case math.IsNaN(kb):
			return -1
		case ka != kb && desc:
			return cmp.Compare(kb, ka)
		case ka != kb:
			return cmp.Compare(ka, kb)
		}
		return strings.Compare(a.ID, b.ID)
	})
	return rows
}

// mwWorld runs the steps against the real consumers and routers and the model.
type mwWorld struct {
	t       *testing.T
	r       *rand.Rand
	seed    uint64
	clock   time.Time
	m       *mwModel
	ev      events.Handlers
	plain   http.Handler // top_flow.sql, /token/top from top_windows.sql
	keptSt  *store.Store
	keptSvc *app.Service
	kept    http.Handler // kept sums, /token/top from the refreshed in-memory copy
	hits    int64        // kept answers of stores restarted before
	seq     int
	batches [][]mwCopy // delivered, for redelivery
	blocks  map[[2]string][]mwCopy
	entVer  map[string]int64 // the newest entity version sent of each exchange
	log     []string
}

func (w *mwWorld) now() time.Time { return w.clock }

func (w *mwWorld) router(st *store.Store, refresh time.Duration) (http.Handler, *app.Service) {
	set, _ := chains.NewSet(nil)
	e := httpx.NewEngine(httpx.EngineOptions{Service: "token-analytics"})
	svc := app.New(st, app.Options{Now: w.now, TopRefresh: refresh})
	Register(e, svc, set)
	return e, svc
}

// restartKept is a replica's restart: a new store and service over the same database, its kept
// sums empty.
func (w *mwWorld) restartKept() {
	if w.keptSt != nil {
		w.hits += w.keptSt.KeptTopFlowAnswers()
	}
	w.keptSt = store.New(pgtest.Pool(w.t), store.Retention(0, w.now), store.KeepTopFlows(1, 1<<20), store.TopFlowRebuildInterval(0))
	w.kept, w.keptSvc = w.router(w.keptSt, time.Hour)
	// what a start does: every deposit address is classified already, so this changes nothing
	if err := w.keptSt.ClassifyDepositAddresses(context.Background()); err != nil {
		w.fail("classify deposit addresses: %v", err)
	}
}

func (w *mwWorld) step(format string, args ...any) {
	w.log = append(w.log, fmt.Sprintf(format, args...))
}

func (w *mwWorld) fail(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf("seed %d after steps:\n  %s\n%s", w.seed, strings.Join(w.log, "\n  "), fmt.Sprintf(format, args...))
}

// transfers are n new transfers in hours [from, to] (their times at most the clock).
func (w *mwWorld) transfers(n int, from, to time.Time) []mwCopy {
	var out []mwCopy
	hours := int(to.Sub(from)/time.Hour) + 1
	for range n {
		tok := mwTokens[w.r.IntN(len(mwTokens))]
		chain := mwChains[w.r.IntN(2)]
		h := from.Add(time.Duration(w.r.IntN(hours)) * time.Hour)
		at := h.Add(time.Duration(w.r.IntN(3600)) * time.Second)
		if at.After(w.clock) {
			at = w.clock
		}
		w.seq++
		c := mwCopy{chain: chain, id: fmt.Sprintf("0x%06x_%d", w.seq, w.r.IntN(3)), token: tok.contract[chain],
			block: fmt.Sprintf("0x%s%d%02d", chain[:1], at.Unix()/3600, w.r.IntN(3)), at: at,
			from: mwHolder(w.r.IntN(15)), to: mwHolder(w.r.IntN(15)), decimals: tok.decimals[chain],
			units: fromTenths(int64(1 + w.r.IntN(400))), usd: fromTenths(int64(w.r.IntN(400))), hasUSD: w.r.IntN(8) != 0}
		switch w.r.IntN(6) {
		case 0: // a customer's deposit
			c.to = w.mwDepositHolder()
		case 1: // a sweep into an exchange's wallet
			c.from, c.to = w.mwDepositHolder(), mwHolder(mwExchanges[w.r.IntN(len(mwExchanges))].wallet)
		}
		if !c.hasUSD {
			c.usd = 0
			if w.r.IntN(3) == 0 { // a transfer of nothing (no price, amount 0): no flow to list
				c.units = 0
			}
		}
		out = append(out, c)
	}
	return out
}

// send delivers copies as one consumer batch of chain.transfers.v1 records.
func (w *mwWorld) send(cs []mwCopy) {
	w.t.Helper()
	var batch []eventbus.Message[*eventsv1.Transfer]
	for _, c := range cs {
		amount := fmt.Sprintf("%d%s", tenths(c.units), strings.Repeat("0", int(c.decimals)-1))
		t := &eventsv1.Transfer{Id: c.id, Chain: c.chain, TransactionHash: strings.Split(c.id, "_")[0], BlockHash: c.block,
			BlockTimeMs: c.at.UnixMilli(), From: c.from, To: c.to, TokenAddress: c.token, TokenDecimals: c.decimals,
			Amount: amount, Type: eventsv1.TransferType_TRANSFER_TYPE_TOKEN}
		if c.hasUSD {
			t.HistoricalUsd = &c.usd
		}
		batch = append(batch, eventbus.Message[*eventsv1.Transfer]{Msg: t})
	}
	if err := w.ev.Transfers(context.Background(), batch); err != nil {
		w.fail("transfers: %v", err)
	}
	w.m.deliver(cs)
	w.batches = append(w.batches, cs)
	for _, c := range cs {
		k := [2]string{c.chain, c.block}
		w.blocks[k] = append(w.blocks[k], c)
	}
}

func (w *mwWorld) reorg(chain string, orphaned, canonical []string) {
	w.t.Helper()
	r := &eventsv1.Reorg{Chain: chain}
	for _, h := range orphaned {
		r.Orphaned = append(r.Orphaned, &eventsv1.Reorg_Block{Hash: h})
	}
	for _, h := range canonical {
		r.Canonical = append(r.Canonical, &eventsv1.Reorg_Block{Hash: h})
	}
	if err := w.ev.Reorgs(context.Background(), []eventbus.Message[*eventsv1.Reorg]{{Msg: r}}); err != nil {
		w.fail("reorg: %v", err)
	}
	w.m.reorg(chain, orphaned, canonical)
}

// attribute delivers one batch of intel.attributions.v1 records: address, entity type ("" the
// tombstone untagging it) and version each; the entity is one of its own per type and address,
// of entity version 0.
func (w *mwWorld) attribute(as ...[3]string) {
	w.t.Helper()
	var recs []mwAttr
	for _, a := range as {
		addr, typ := a[0], a[1]
		var v int64
		fmt.Sscan(a[2], &v)
		if typ == "" {
			recs = append(recs, mwAttr{addr: addr, tombstone: true})
			continue
		}
		recs = append(recs, mwAttr{addr: addr, version: v, entity: &mwEntity{id: typ + "-" + addr[len(addr)-3:], typ: typ}})
	}
	w.attributeRecs(recs...)
}

// attributeRecs delivers the records as one batch of intel.attributions.v1, the model applying
// them in turn.
func (w *mwWorld) attributeRecs(recs ...mwAttr) {
	w.t.Helper()
	entity := func(e *mwEntity) *eventsv1.Entity {
		if e == nil {
			return nil
		}
		return &eventsv1.Entity{Id: e.id, Name: strings.Replace(e.id, "-", " ", 1), Type: e.typ, Version: e.version}
	}
	var batch []eventbus.Message[*eventsv1.Attribution]
	for _, a := range recs {
		m := eventbus.Message[*eventsv1.Attribution]{Key: "evm:" + a.addr, Tombstone: true, Msg: &eventsv1.Attribution{}}
		if !a.tombstone {
			m = eventbus.Message[*eventsv1.Attribution]{Key: "evm:" + a.addr, Msg: &eventsv1.Attribution{ChainType: "evm", Address: a.addr,
				Version: a.version, Entity: entity(a.entity), PredictedEntity: entity(a.predicted), DepositServiceId: a.deposit}}
		}
		batch = append(batch, m)
	}
	if err := w.ev.Attributions(context.Background(), batch); err != nil {
		w.fail("attribution: %v", err)
	}
	for _, a := range recs {
		w.m.attribute(a)
	}
}

// swap delivers a chain.swaps.v1 record of a swap in pool.
func (w *mwWorld) swap(pool string) {
	w.t.Helper()
	chain := mwChains[w.r.IntN(2)]
	err := w.ev.Swaps(context.Background(), []eventbus.Message[*eventsv1.Swap]{{Msg: &eventsv1.Swap{Id: "0xs_1", Chain: chain, ContractAddress: pool}}})
	if err != nil {
		w.fail("swap: %v", err)
	}
	c := w.m.classes[pool]
	c.pool = true
	w.m.classes[pool] = c
}

// mixedBatch is one batch of part of an earlier batch, new transfers of the last hours (some
// ahead of the clock, as a chain whose block times run ahead) and a new id in two blocks.
func (w *mwWorld) mixedBatch() {
	hour := w.clock.Truncate(time.Hour)
	var cs []mwCopy
	if len(w.batches) > 0 {
		old := w.batches[w.r.IntN(len(w.batches))]
		cs = append(cs, old[:w.r.IntN(len(old)+1)]...)
	}
	fresh := w.transfers(2+w.r.IntN(5), hour.Add(-time.Hour), hour)
	for i := range fresh {
		if w.r.IntN(3) == 0 {
			fresh[i].at = w.clock.Add(time.Duration(1+w.r.IntN(300)) * time.Minute)
			fresh[i].block = fmt.Sprintf("0x%s%d%02d", fresh[i].chain[:1], fresh[i].at.Unix()/3600, w.r.IntN(3))
		}
	}
	twice := fresh[0]
	twice.block += "t"
	cs = append(cs, fresh...)
	cs = append(cs, twice, fresh[len(fresh)-1]) // an id in two blocks, and a copy twice
	w.r.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
	w.step("mixed batch of %d (%d new)", len(cs), len(fresh))
	w.send(cs)
}

func (w *mwWorld) closedUntil(chain string) time.Time {
	w.t.Helper()
	marks, err := w.keptSt.ClosedUntil(context.Background())
	if err != nil {
		w.fail("marks: %v", err)
	}
	return marks[chain]
}

// get answers a GET through h.
func (w *mwWorld) get(h http.Handler, path string) string {
	w.t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		w.fail("GET %s: %d %s", path, rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

// randomStep does one random thing to the world.
func (w *mwWorld) randomStep() {
	hour := w.clock.Truncate(time.Hour)
	switch p := w.r.IntN(120); {
	case p >= 110:
		w.exchangeStep()
	case p >= 100:
		w.depositStep()
	case p < 25: // a batch of the recent hours, mostly the open one
		cs := w.transfers(3+w.r.IntN(10), hour.Add(-time.Duration(w.r.IntN(2))*time.Hour), hour)
		w.step("batch of %d in the last hours", len(cs))
		w.send(cs)
	case p < 33 && len(w.batches) > 0: // a redelivered batch
		i := w.r.IntN(len(w.batches))
		w.step("redelivery of batch %d", i)
		w.send(w.batches[i])
	case p < 45: // late transfers into closed hours (new ids, and copies of counted ids in other blocks)
		chain := mwChains[w.r.IntN(2)]
		until := w.closedUntil(chain)
		if until.IsZero() {
			return
		}
		cs := w.transfers(1+w.r.IntN(5), until.Add(-6*time.Hour), until.Add(-time.Hour))
		for i := range cs {
			cs[i].chain, cs[i].token, cs[i].decimals = chain, mwTokens[i%3].contract[chain], mwTokens[i%3].decimals[chain]
			cs[i].block = fmt.Sprintf("0x%s%d%02d", chain[:1], cs[i].at.Unix()/3600, w.r.IntN(3))
		}
		w.step("late batch of %d on %s before %s", len(cs), chain, until.Format("15:04"))
		w.send(cs)
	case p < 57: // a reorg of a recent block: its transfers move to another block, sent before or after
		w.reorgStep()
	case p < 63: // a reorg back: an orphaned block canonical again, the block it moved to orphaned
		w.reorgBack()
	case p < 71: // relabels, untags or stale attributions, one or two in a batch
		var as [][3]string
		for range 1 + w.r.IntN(2) {
			addr := mwHolder(w.r.IntN(8))
			typ := mwTypes[w.r.IntN(len(mwTypes))]
			v := int64(1 + w.r.IntN(6))
			if typ == "" {
				v = 0
			}
			as = append(as, [3]string{addr, typ, fmt.Sprint(v)})
		}
		w.step("attributions %v", as)
		w.attribute(as...)
	case p < 73: // a swap in a pool: a dex from then on unless its entity is a cex
		addr := mwHolder(5 + w.r.IntN(10))
		w.step("swap in pool %s", addr[len(addr)-3:])
		w.swap(addr)
	case p < 80: // a batch mixing a redelivery, new transfers (some up to 90 minutes ahead of the clock) and an id in two blocks
		w.mixedBatch()
	case p < 86:
		all := w.r.IntN(4) == 0
		w.step("close hours at %s (all: %v)", w.clock.Format("15:04"), all)
		closeHours := w.keptSt.CloseHours
		if all {
			closeHours = w.keptSt.CloseAllHours
		}
		if _, err := closeHours(context.Background()); err != nil {
			w.fail("close: %v", err)
		}
	case p < 95:
		d := time.Duration(5+w.r.IntN(180)) * time.Minute
		w.clock = w.clock.Add(d)
		w.step("clock to %s", w.clock.Format("01-02 15:04"))
	case p < 97:
		w.step("refresh the kept sums")
		if _, err := w.keptSt.RefreshTopFlows(context.Background()); err != nil {
			w.fail("refresh kept sums: %v", err)
		}
	default:
		w.step("restart the kept sums' replica")
		w.restartKept()
	}
}

// depositStep delivers one or two attributions of the holders that may be deposit addresses:
// becoming one of an exchange's (the one no record named yet too), one with an entity as well
// (which its entity's type classifies), ceasing to be one (no deposit service, or an untag),
// in versions that may be older than the stored one.
func (w *mwWorld) depositStep() {
	var recs []mwAttr
	for range 1 + w.r.IntN(2) {
		a := mwAttr{addr: w.mwDepositHolder(), version: int64(1 + w.r.IntN(6))}
		switch p := w.r.IntN(20); {
		case p < 12:
			a.deposit = mwExchanges[w.r.IntN(len(mwExchanges))].id
		case p < 14:
			a.deposit = mwExchanges[w.r.IntN(len(mwExchanges))].id
			a.entity = &mwEntity{id: "fund-" + a.addr[len(a.addr)-3:], typ: "fund"}
		case p < 17: // neither entity nor deposit service
		default:
			a = mwAttr{addr: a.addr, tombstone: true}
		}
		recs = append(recs, a)
	}
	w.step("deposit attributions %v", recs)
	w.attributeRecs(recs...)
}

// exchangeStep delivers one or two entity records of the exchanges: a type (cex, fund, dex) of
// a newer entity version, an older or equal one, or version 0, carried by the exchange wallet's
// attribution (itself maybe older than the stored one) or as another address's prediction; up
// to three in a batch, mostly of one exchange.
func (w *mwWorld) exchangeStep() {
	var recs []mwAttr
	x := mwExchanges[w.r.IntN(len(mwExchanges))]
	for range 1 + w.r.IntN(3) {
		if len(recs) > 0 && w.r.IntN(4) == 0 {
			x = mwExchanges[w.r.IntN(len(mwExchanges))]
		}
		e := &mwEntity{id: x.id, typ: []string{"cex", "cex", "fund", "fund", "dex"}[w.r.IntN(5)]}
		switch p := w.r.IntN(10); {
		case p < 5:
			w.entVer[x.id]++
			e.version = w.entVer[x.id]
		case p < 8:
			e.version = max(1, w.entVer[x.id]-int64(w.r.IntN(3)))
		default: // a publisher that predates entity versions
		}
		a := mwAttr{addr: mwHolder(x.wallet), version: int64(1 + w.r.IntN(8)), entity: e}
		if w.r.IntN(3) == 0 {
			a = mwAttr{addr: mwHolder(10 + w.r.IntN(5)), version: int64(1 + w.r.IntN(6)), predicted: e}
		}
		recs = append(recs, a)
	}
	w.step("exchange records %v", recs)
	w.attributeRecs(recs...)
}

// reorgStep orphans one or two blocks of a chain holding transfers and moves some of their
// transfers to new blocks (of the same hour, the next one up to the clock, or two hours earlier,
// maybe closed), the new copies delivered before or after the reorg.
func (w *mwWorld) reorgStep() {
	chain := mwChains[w.r.IntN(2)]
	var keys [][2]string
	for k := range w.blocks {
		if k[0] == chain && !w.m.orphaned[k] && !strings.HasSuffix(k[1], "r") {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	slices.SortFunc(keys, func(a, b [2]string) int { return strings.Compare(a[1], b[1]) })
	var orphaned, canonical []string
	var moved []mwCopy
	for range 1 + w.r.IntN(2) {
		k := keys[w.r.IntN(len(keys))]
		if slices.Contains(orphaned, k[1]) {
			continue
		}
		orphaned, canonical = append(orphaned, k[1]), append(canonical, k[1]+"r")
		shift := []time.Duration{0, 40 * time.Minute, -2 * time.Hour}[w.r.IntN(3)]
		for _, c := range w.blocks[k] {
			if w.r.IntN(3) != 0 {
				c.block = k[1] + "r"
				if at := c.at.Add(shift); !at.After(w.clock) {
					c.at = at
				}
				moved = append(moved, c)
			}
		}
	}
	first := w.r.IntN(2) == 0
	w.step("reorg of %s %v, %d moved to %v, new copies %s", chain, orphaned, len(moved), canonical, map[bool]string{true: "first", false: "after"}[first])
	if first && len(moved) > 0 {
		w.send(moved)
	}
	w.reorg(chain, orphaned, canonical)
	if !first && len(moved) > 0 {
		w.send(moved)
	}
}

func (w *mwWorld) reorgBack() {
	var keys [][2]string
	for k := range w.m.orphaned {
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return
	}
	slices.SortFunc(keys, func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) })
	k := keys[w.r.IntN(len(keys))]
	w.step("reorg back on %s: %s canonical, %sr orphaned", k[0], k[1], k[1])
	w.reorg(k[0], []string{k[1] + "r"}, []string{k[1]})
}

// check compares the routes' answers with the model.
func (w *mwWorld) check() {
	w.t.Helper()
	w.step("check at %s", w.clock.Format("01-02 15:04"))
	w.checkTopFlow()
	w.checkVolume()
	if err := w.keptSvc.RefreshTop(context.Background()); err != nil {
		w.fail("refresh top: %v", err)
	}
	w.checkTop()
}

func (w *mwWorld) checkTopFlow() {
	w.t.Helper()
	type ask struct {
		path string
		deps []mwDep
	}
	var asks []ask
	for _, t := range mwTokens {
		asks = append(asks, ask{"/token/top_flow/" + t.id + "?", depsOf(t.id, nil)})
	}
	asks = append(asks, ask{"/token/top_flow/tkb?chains=base&", depsOf("tkb", []string{"base"})},
		ask{"/token/top_flow/ethereum/" + mwTokens[0].contract["ethereum"] + "?", []mwDep{{"ethereum", mwTokens[0].contract["ethereum"]}}},
		ask{"/token/top_flow/base/" + mwTokens[2].contract["base"] + "?", []mwDep{{"base", mwTokens[2].contract["base"]}}})
	for _, a := range asks {
		for _, window := range []string{"1h", "3h", "24h", "7d"} {
			d, _ := time.ParseDuration(strings.Replace(window, "7d", "168h", 1))
			limit := []int{3, 50}[w.r.IntN(2)]
			path := fmt.Sprintf("%stimeLast=%s&limit=%d", a.path, window, limit)
			all := w.m.topFlow(a.deps, w.clock.Add(-d))
			for name, h := range map[string]http.Handler{"top_flow.sql": w.plain, "kept sums": w.kept} {
				if got := flowRowsOf(w, w.get(h, path)); !sameFlows(got, all, limit) {
					w.fail("%s (%s):\n  got %+v\nmodel %+v", path, name, got, all[:min(limit, len(all))])
				}
			}
		}
	}
}

// sameFlows is whether got is top_flow's answer of the model's rows all (every address, in
// order) for limit: each row the model's of its address (near), in the model's order up to
// addresses whose totals the model has equal (the route's last bits may order those either way).
func sameFlows(got, all []mwFlowRow, limit int) bool {
	if len(got) != min(limit, len(all)) {
		return false
	}
	model := map[[2]string]mwFlowRow{}
	for _, r := range all {
		model[[2]string{r.Chain, r.Address}] = r
	}
	for i, g := range got {
		m, ok := model[[2]string{g.Chain, g.Address}]
		if !ok || g.EntityType != m.EntityType || g.Deposit != m.Deposit || m.total != all[i].total ||
			!near(g.InUSD, m.InUSD) || !near(g.InValue, m.InValue) || !near(g.OutUSD, m.OutUSD) || !near(g.OutValue, m.OutValue) {
			return false
		}
	}
	return true
}

func flowRowsOf(w *mwWorld, body string) []mwFlowRow {
	var rs []struct {
		Address struct {
			Address, Chain   string
			ServiceEntity    *struct{ Type string }
			DepositServiceID string
		}
		InUSD, InValue, OutUSD, OutValue float64
	}
	if err := json.Unmarshal([]byte(body), &rs); err != nil {
		w.fail("top_flow body %s: %v", body, err)
	}
	out := []mwFlowRow{}
	for _, r := range rs {
		f := mwFlowRow{Chain: r.Address.Chain, Address: r.Address.Address, Deposit: r.Address.DepositServiceID,
			InUSD: r.InUSD, InValue: r.InValue, OutUSD: r.OutUSD, OutValue: r.OutValue}
		if r.Address.ServiceEntity != nil {
			f.EntityType = r.Address.ServiceEntity.Type
		}
		out = append(out, f)
	}
	return out
}

func (w *mwWorld) checkVolume() {
	w.t.Helper()
	for _, t := range mwTokens {
		for _, q := range []struct {
			gran, last   string
			size, window time.Duration
		}{{"1h", "2d", time.Hour, 48 * time.Hour}, {"1d", "7d", 24 * time.Hour, 7 * 24 * time.Hour}, {"4h", "1d", 4 * time.Hour, 24 * time.Hour},
			{"7d", "30d", 7 * 24 * time.Hour, 30 * 24 * time.Hour}, {"12h", "3d", 12 * time.Hour, 72 * time.Hour}} {
			if q.gran != "1h" && q.gran != "1d" && w.r.IntN(3) != 0 {
				continue // the other widths now and then: the check's cost is in its requests
			}
			paths := map[string][]mwDep{fmt.Sprintf("/token/volume/%s?granularity=%s&timeLast=%s", t.id, q.gran, q.last): depsOf(t.id, nil)}
			c := mwChains[w.r.IntN(2)]
			paths[fmt.Sprintf("/token/volume/%s/%s?granularity=%s&timeLast=%s", c, t.contract[c], q.gran, q.last)] = []mwDep{{c, t.contract[c]}}
			for path, deps := range paths {
				var got []mwBucket
				if err := json.Unmarshal([]byte(w.get(w.plain, path)), &got); err != nil {
					w.fail("%s: %v", path, err)
				}
				for i := range got {
					got[i].Time = got[i].Time.UTC()
				}
				if want := w.m.volume(deps, w.clock, q.size, q.window); !sameBuckets(got, want) {
					w.fail("%s:\n  got %+v\nmodel %+v", path, got, want)
				}
			}
		}
	}
}

func sameBuckets(got, want []mwBucket) bool {
	if len(got) != len(want) {
		return false
	}
	for i, g := range got {
		m := want[i]
		if !g.Time.Equal(m.Time) || !near(g.InUSD, m.InUSD) || !near(g.InValue, m.InValue) || !near(g.OutUSD, m.OutUSD) || !near(g.OutValue, m.OutValue) {
			return false
		}
	}
	return true
}

func (w *mwWorld) checkTop() {
	w.t.Helper()
	for range 4 {
		tfs := []string{"1h", "6h", "12h", "24h", "7d"}
		tfName := tfs[w.r.IntN(len(tfs))]
		tf := app.Timeframes[tfName]
		agg := mwAggs[w.r.IntN(len(mwAggs))]
		desc, percent := w.r.IntN(2) == 0, w.r.IntN(3) == 0
		n, nParam := 1, "1"
		if !percent && w.r.IntN(2) == 0 { // auto: a mean over several windows, not exact in the last bits
			n, nParam = app.AutoReferencePeriods(tf), "auto"
		}
		var chainsOnly []string
		path := fmt.Sprintf("/token/top?timeframe=%s&orderByAgg=%s&orderByDesc=%v&orderByPercent=%v&numReferencePeriods=%s", tfName, agg, desc, percent, nParam)
		if w.r.IntN(4) == 0 {
			chainsOnly = []string{mwChains[w.r.IntN(2)]}
			path += "&chains=" + chainsOnly[0]
		}
		want := w.m.top(w.clock, tf, n, agg, desc, percent, chainsOnly)
		for name, h := range map[string]http.Handler{"statement": w.plain, "in-memory copy": w.kept} {
			got := topRowsOf(w, w.get(h, path))
			if !sameTop(got, want) {
				w.fail("%s (%s):\n  got %+v\nmodel %+v", path, name, got, want)
			}
		}
	}
}

func topRowsOf(w *mwWorld, body string) []mwTopRow {
	type iv struct {
		Volume, InflowCexVolume, OutflowCexVolume, InflowDexVolume, OutflowDexVolume, Netflow float64
	}
	var r struct {
		Tokens []struct {
			Token             struct{ ID string }
			Current, Previous iv
		}
		Total int
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		w.fail("top body %s: %v", body, err)
	}
	if r.Total != len(r.Tokens) {
		w.fail("top body %s: total %d of %d rows", body, r.Total, len(r.Tokens))
	}
	var out []mwTopRow
	for _, t := range r.Tokens {
		c, p := t.Current, t.Previous
		out = append(out, mwTopRow{ID: t.Token.ID,
			Current:  [6]float64{c.Volume, c.InflowCexVolume, c.OutflowCexVolume, c.InflowDexVolume, c.OutflowDexVolume, c.Netflow},
			Previous: [6]float64{p.Volume, p.InflowCexVolume, p.OutflowCexVolume, p.InflowDexVolume, p.OutflowDexVolume, p.Netflow}})
	}
	return out
}

// sameTop compares the order and the figures (near: a mean's last bits may differ by summing
// order; 0 exactly where the model has 0): each row is the model's of its token, in the model's
// order up to tokens whose ranking values the model has equal within the last bits.
func sameTop(got, want []mwTopRow) bool {
	if len(got) != len(want) {
		return false
	}
	model := map[string]mwTopRow{}
	for _, r := range want {
		model[r.ID] = r
	}
	for i, g := range got {
		m, ok := model[g.ID]
		if !ok || !near(m.key, want[i].key) {
			return false
		}
		for j := range 6 {
			if !near(g.Current[j], m.Current[j]) || !near(g.Previous[j], m.Previous[j]) {
				return false
			}
		}
	}
	return true
}

// newModelWorld empties the flow tables, registers the tokens with a price and the first
// attributions, on a clock at 06:20 (so the 24h windows and day buckets span two UTC days).
func newModelWorld(t *testing.T, seed uint64) *mwWorld {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE market.tokens, market.deployments, market.prices, market.price_extremes, market.outbox,
		market.flows, market.orphaned_blocks, market.address_classes, market.flow_hours, market.flow_days, market.flow_address_hours,
		market.flow_marks, market.flow_address_versions, market.entity_types`); err != nil {
		t.Fatal(err)
	}
	w := &mwWorld{t: t, r: rand.New(rand.NewPCG(seed, 11)), seed: seed, clock: time.Date(2026, 3, 4, 6, 20, 0, 0, time.UTC),
		m: newModel(), blocks: map[[2]string][]mwCopy{}, entVer: map[string]int64{"exa": 1, "exb": 1}}
	plainSt := store.New(pool, store.Retention(0, w.now), store.KeepTopFlows(0, 0))
	w.plain, _ = w.router(plainSt, 0)
	set, _ := chains.NewSet(nil)
	w.ev = events.Handlers{Store: plainSt, Chains: set}
	w.restartKept()
	var us []app.TokenUpdate
	for _, tok := range mwTokens {
		u := app.TokenUpdate{PricingID: tok.id, Name: tok.symbol, Symbol: tok.symbol, MarketCap: ptr(1e9)}
		for _, c := range mwChains {
			u.Deployments = append(u.Deployments, app.Deployment{Chain: c, Address: tok.contract[c], Decimals: tok.decimals[c]})
		}
		us = append(us, u)
	}
	if err := plainSt.UpsertTokens(ctx, us); err != nil {
		t.Fatal(err)
	}
	for i, tok := range mwTokens {
		if _, err := plainSt.AddPrices(ctx, []app.PricePoint{{PricingID: tok.id, Granularity: app.Daily,
			Time: w.clock.Add(-60 * 24 * time.Hour).Truncate(24 * time.Hour), Price: float64(i + 1)}}); err != nil {
			t.Fatal(err)
		}
	}
	for i, typ := range []string{"dex", "dex", "fund"} {
		w.attribute([3]string{mwHolder(2 + i), typ, "1"})
	}
	// the exchanges' wallets, a deposit address of exa and one of exc, which no record names yet
	w.attributeRecs(mwAttr{addr: mwHolder(0), version: 1, entity: &mwEntity{id: "exa", typ: "cex", version: 1}},
		mwAttr{addr: mwHolder(1), version: 1, entity: &mwEntity{id: "exb", typ: "cex", version: 1}},
		mwAttr{addr: mwHolder(8), version: 1, deposit: "exa"}, mwAttr{addr: mwHolder(9), version: 1, deposit: "exc"})
	return w
}

// TestRollupsMatchModel runs random sequences of deliveries, reorgs, relabels, closes, clock moves
// and kept-sums restarts and compares top_flow (kept sums and top_flow.sql), volume and top with
// the model after every few steps.
func TestRollupsMatchModel(t *testing.T) {
	var hits int64
	for seed := range uint64(8) {
		w := newModelWorld(t, seed)
		// a history of closed hours first: transfers over the last nine hours, closed
		w.step("history batch")
		w.send(w.transfers(60, w.clock.Truncate(time.Hour).Add(-9*time.Hour), w.clock.Truncate(time.Hour)))
		if _, err := w.keptSt.CloseHours(context.Background()); err != nil {
			t.Fatal(err)
		}
		w.check()
		if _, err := w.keptSt.RefreshTopFlows(context.Background()); err != nil {
			t.Fatal(err)
		}
		for i := range 80 {
			w.randomStep()
			if i%5 == 4 {
				w.check()
			}
		}
		w.check()
		hits += w.hits + w.keptSt.KeptTopFlowAnswers()
	}
	if hits == 0 {
		t.Fatal("no top_flow answer came from kept sums")
	}
}

// TestTopFlowLeavesOutAddressesAReorgEmptied is the model test's first disagreement, minimised:
// a transfer of a closed hour whose block a reorg orphans leaves its addresses' rows of
// flow_address_hours at zeros (rows are updated, never deleted), and top_flow listed those
// addresses with 0 in and out, from top_flow.sql and from the kept sums alike. A reorg undoes the
// transfer (docs/token-analytics.md, "Flow rollups"), so they moved nothing in the window.
func TestTopFlowLeavesOutAddressesAReorgEmptied(t *testing.T) {
	ctx := context.Background()
	w := newModelWorld(t, 0)
	hour := w.clock.Truncate(time.Hour)
	tok := mwTokens[0].contract["ethereum"]
	undone := mwCopy{chain: "ethereum", id: "0x01_0", block: "0xe1", token: tok, from: mwHolder(10), to: mwHolder(11),
		at: hour.Add(-2 * time.Hour), usd: 5, units: 2, hasUSD: true, decimals: 18}
	kept := mwCopy{chain: "ethereum", id: "0x02_0", block: "0xe2", token: tok, from: mwHolder(12), to: mwHolder(13),
		at: hour.Add(-2 * time.Hour), usd: 3, units: 1, hasUSD: true, decimals: 18}
	w.send([]mwCopy{undone, kept})
	if _, err := w.keptSt.CloseHours(ctx); err != nil {
		t.Fatal(err)
	}
	w.reorg("ethereum", []string{"0xe1"}, nil)
	want := `[
		{"address":{"address":"` + mwHolder(12) + `","chain":"ethereum","contract":false,"isUserAddress":false},"inUSD":0,"inValue":0,"outUSD":3,"outValue":1},
		{"address":{"address":"` + mwHolder(13) + `","chain":"ethereum","contract":false,"isUserAddress":false},"inUSD":3,"inValue":1,"outUSD":0,"outValue":0}]`
	const path = "/token/top_flow/tka?timeLast=24h"
	sameJSON(t, "top_flow.sql", w.get(w.plain, path), want)
	sameJSON(t, "kept sums' first request", w.get(w.kept, path), want)
	if _, err := w.keptSt.RefreshTopFlows(ctx); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "kept sums", w.get(w.kept, path), want)
	if w.keptSt.KeptTopFlowAnswers() != 1 {
		t.Fatalf("%d answers from kept sums, want 1", w.keptSt.KeptTopFlowAnswers())
	}
}

// TestReorgUndoingTenthsLeavesNothing: transfers of non-binary fractions (0.1, 0.3, 0.2 USD and
// units) into an exchange's wallet and a deposit address, in a closed hour and in the open one,
// each in its own block, orphaned one reorg at a time. The float8 sums then hold residues such
// as 2.8e-17 where the transfers were; every route must show nothing: no top_flow address, zero
// volumes, zero CEX flows (the model's exact zeros, compared exactly by check).
func TestReorgUndoingTenthsLeavesNothing(t *testing.T) {
	ctx := context.Background()
	w := newModelWorld(t, 0)
	hour := w.clock.Truncate(time.Hour)
	tok := mwTokens[0].contract["ethereum"]
	var blocks []string
	send := func(at time.Time) {
		var cs []mwCopy
		for i, a := range []float64{0.1, 0.3, 0.2} {
			w.seq++
			c := mwCopy{chain: "ethereum", id: fmt.Sprintf("0x%06x_0", w.seq), block: fmt.Sprintf("0xb%d", w.seq), token: tok,
				from: mwHolder(12), to: []string{mwHolder(0), mwHolder(8), mwHolder(0)}[i], at: at, usd: a, units: a, hasUSD: true, decimals: 18}
			cs, blocks = append(cs, c), append(blocks, c.block)
		}
		w.send(cs)
	}
	send(hour.Add(-2 * time.Hour))
	if _, err := w.keptSt.CloseHours(ctx); err != nil {
		t.Fatal(err)
	}
	send(w.clock.Add(-5 * time.Minute))
	if _, err := w.keptSt.RefreshTopFlows(ctx); err != nil {
		t.Fatal(err)
	}
	w.check()
	for _, b := range blocks {
		w.reorg("ethereum", []string{b}, nil)
	}
	w.check()
	for _, h := range []http.Handler{w.plain, w.kept} {
		sameJSON(t, "top_flow", w.get(h, "/token/top_flow/tka?timeLast=24h"), `[]`)
	}
}

// TestUntagThenOlderAttributionInOneBatch is the model test's second disagreement, minimised: an
// address attributed at version 5, then in one consumer batch its tombstone (untagged) and an
// attribution of version 4. Applied in turn, as two batches would apply them, the untag clears
// the stored version and the attribution of version 4 then counts; the batch's merge kept only
// the attribution of the highest version, which the stored version 5 outranked, so the address
// stayed as before the untag: its class (and so the rollups' CEX columns) depended on how the
// records were batched.
func TestUntagThenOlderAttributionInOneBatch(t *testing.T) {
	w := newModelWorld(t, 0)
	a, b := mwHolder(10), mwHolder(11)
	w.attribute([3]string{a, "fund", "5"})
	w.send([]mwCopy{{chain: "ethereum", id: "0x01_0", block: "0xe1", token: mwTokens[0].contract["ethereum"], from: b, to: a,
		at: w.clock.Add(-10 * time.Minute), usd: 4, units: 2, hasUSD: true, decimals: 18}})
	w.attribute([3]string{a, "", "0"}, [3]string{a, "cex", "4"})
	sameJSON(t, "top", w.get(w.plain, "/token/top?timeframe=1h&tokenIds=tka"), `{"tokens":[{"token":{"id":"tka","symbol":"TKA","marketCap":1e9},
		"current":{"price":1,"volume":4,"inflowCexVolume":4,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":4},
		"previous":{"price":1,"volume":0,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":0}}],"total":1}`)
	sameJSON(t, "top_flow", w.get(w.plain, "/token/top_flow/tka?timeLast=1h&limit=1"), `[{"address":{"address":"`+a+`","chain":"ethereum",
		"serviceEntity":{"id":"cex-a0a","name":"cex a0a","note":"","type":"cex","service":null},"contract":false,"isUserAddress":false},
		"inUSD":4,"inValue":2,"outUSD":0,"outValue":0}]`)
}

// TestEntityVersionZeroThenOlderInOneBatch is the model test's first disagreement over deposit
// addresses, minimised: exa's type is cex at entity version 5, and one consumer batch carries a
// record of exa of version 0 (a publisher that predates versions) then one of version 3 naming
// it a fund. Applied in turn, as two batches would apply them, the record of version 0 applies
// whatever is stored and the one of version 3 then counts: exa is a fund, its deposit address
// counts as nothing. The batch's merge kept only the record of version 3, which the stored
// version 5 outranked, so the deposit address's receipts stayed CEX inflow: the type (and so
// the rollups' CEX columns) depended on how the records were batched.
func TestEntityVersionZeroThenOlderInOneBatch(t *testing.T) {
	w := newModelWorld(t, 0)
	w.attributeRecs(mwAttr{addr: mwHolder(0), version: 2, entity: &mwEntity{id: "exa", typ: "cex", version: 5}})
	// a customer's deposit into exa's deposit address (holder 8)
	w.send([]mwCopy{{chain: "ethereum", id: "0x01_0", block: "0xe1", token: mwTokens[0].contract["ethereum"], from: mwHolder(12), to: mwHolder(8),
		at: w.clock.Add(-10 * time.Minute), usd: 4, units: 2, hasUSD: true, decimals: 18}})
	top := func(cexIn int) string {
		return fmt.Sprintf(`{"tokens":[{"token":{"id":"tka","symbol":"TKA","marketCap":1e9},
		"current":{"price":1,"volume":4,"inflowCexVolume":%d,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":%[1]d},
		"previous":{"price":1,"volume":0,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":0}}],"total":1}`, cexIn)
	}
	const path = "/token/top?timeframe=1h&tokenIds=tka"
	sameJSON(t, "exa a cex", w.get(w.plain, path), top(4))
	w.attributeRecs(mwAttr{addr: mwHolder(14), version: 1, predicted: &mwEntity{id: "exa", typ: "cex", version: 0}},
		mwAttr{addr: mwHolder(13), version: 1, predicted: &mwEntity{id: "exa", typ: "fund", version: 3}})
	sameJSON(t, "exa a fund", w.get(w.plain, path), top(0))
	// the stored version is 3: a record of version 4 counts
	w.attributeRecs(mwAttr{addr: mwHolder(14), version: 2, predicted: &mwEntity{id: "exa", typ: "cex", version: 4}})
	sameJSON(t, "exa a cex again", w.get(w.plain, path), top(4))
}
