package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/jackc/pgx/v5"
)

// top_flow's kept sums. The heaviest requests of top_flow are a busy token's: every closed
// hour's flow_address_hours row of the window is hashed into its address's group. A replica
// keeps, per deployment set and window start asked for, the closed hours' per-address sums
// (top_flow_closed.sql) under the stamp they were read with: per deployment its chain's
// rolled_until and its flow_address_versions counter, which every statement changing a closed
// hour's rows moves in its transaction (the close writes only hours from rolled_until on and
// moves it; pruning only hours before the flow horizon, which no kept window reaches). A
// request then reads, in one statement, the stamp and the counted transfers of the hours from
// the kept sums' rolled_until on from market.flows (top_flow_open.sql), and uses the kept sums
// only when the versions are the ones they were read under: otherwise it runs top_flow.sql. So
// every answer is that of one snapshot, with every transfer committed before it. The merge adds
// each transfer to its receiver's and its sender's sums and takes the top limit of the addresses
// it touched and of the first limit untouched ones in the kept order.

// addrKey is an address of one chain of a deployment set: n is the chain's rank among the set's
// chains (byte order, 1 first), as top_flow.sql groups.
type addrKey struct {
	n    int32
	addr string
}

type flowSum struct{ inUSD, inValue, outUSD, outValue float64 }

func (a *flowSum) add(b flowSum) {
	a.inUSD, a.inValue, a.outUSD, a.outValue = a.inUSD+b.inUSD, a.inValue+b.inValue, a.outUSD+b.outUSD, a.outValue+b.outValue
}

// flowRow is an address's sums; rows are ordered by in + out USD descending, then n and address
// (top_flow.sql's order).
type flowRow struct {
	key   addrKey
	sum   flowSum
	total float64
}

func flowRowBefore(a, b *flowRow) bool {
	if a.total != b.total {
		return a.total > b.total
	}
	if a.key.n != b.key.n {
		return a.key.n < b.key.n
	}
	return a.key.addr < b.key.addr
}

func flowRowCmp(a, b flowRow) int {
	switch {
	case flowRowBefore(&a, &b):
		return -1
	case flowRowBefore(&b, &a):
		return 1
	}
	return 0
}

// keptFlows are a deployment set's closed hours' per-address sums since from.
type keptFlows struct {
	chains, tokens []string
	from           time.Time
	rolled         []time.Time // per deployment: where the sums end
	versions       []int64
	rows           []flowRow          // in flowRowBefore order
	index          []map[string]int32 // per chain rank n - 1: address to its row
	refresh        bool               // a request found it behind a close or stale
}

// keptBuild is when a set and window start's sums may be read next: every after a read, later
// after failed ones in a row.
type keptBuild struct {
	next  time.Time
	fails int
}

// wantedFlows is a deployment set and window asked for lately.
type wantedFlows struct {
	chains, tokens []string
	back           time.Duration // the window starts back before the current hour
	asked          time.Time
	light          time.Time // when a build found fewer addresses than the minimum, or no room
}

// topFlowKeep is a replica's kept sums.
type topFlowKeep struct {
	min, budget int
	every       time.Duration // a key's sums read at most once per every
	read        func(ctx context.Context, chains, tokens []string, from time.Time) (*keptFlows, error)
	mu          sync.Mutex
	kept        map[string]*keptFlows   // by set and from
	wanted      map[string]*wantedFlows // by set and back
	builds      map[string]*keptBuild   // by set and from: the keys read lately
	wake        chan struct{}
	hits        atomic.Int64 // answers from kept sums
}

// wantedFor is how long a set and window asked for once keep their sums rebuilt; lightFor how
// long one found too small to keep is not built again; failedAfter the least wait before a failed
// read is retried, doubled per failure in a row up to failedMax.
const (
	wantedFor   = time.Hour
	lightFor    = time.Hour
	failedAfter = time.Minute
	failedMax   = time.Hour
)

func newTopFlowKeep(minAddresses, budget int) *topFlowKeep {
	return &topFlowKeep{min: minAddresses, budget: budget, kept: map[string]*keptFlows{},
		wanted: map[string]*wantedFlows{}, builds: map[string]*keptBuild{}, wake: make(chan struct{}, 1)}
}

func setKey(chains, tokens []string) string {
	var b strings.Builder
	for i := range chains {
		b.WriteString(chains[i])
		b.WriteByte(0)
		b.WriteString(tokens[i])
		b.WriteByte(0)
	}
	return b.String()
}

func keptKey(set string, from time.Time) string {
	return set + "@" + from.UTC().Format(time.RFC3339)
}

func (k *topFlowKeep) signal() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// ask records a request and returns the kept sums of its window, if any.
func (k *topFlowKeep) ask(chains, tokens []string, from, now time.Time) *keptFlows {
	set := setKey(chains, tokens)
	back := now.Truncate(time.Hour).Sub(from)
	k.mu.Lock()
	defer k.mu.Unlock()
	w := k.wanted[set+"#"+back.String()]
	if w == nil {
		w = &wantedFlows{chains: chains, tokens: tokens, back: back}
		k.wanted[set+"#"+back.String()] = w
	}
	w.asked = now
	key := keptKey(set, from)
	e := k.kept[key]
	if e == nil && now.Sub(w.light) >= lightFor && k.due(key, now) {
		k.signal()
	}
	return e
}

// due is whether key's sums may be read at now (k.mu held).
func (k *topFlowKeep) due(key string, now time.Time) bool {
	b := k.builds[key]
	return b == nil || !now.Before(b.next)
}

// built records a read of key's sums at now: the next not before every later, or after a
// failure the longer of every and failedAfter, doubled per failure in a row up to failedMax.
func (k *topFlowKeep) built(key string, now time.Time, failed bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.builds[key]
	if b == nil {
		b = &keptBuild{}
		k.builds[key] = b
	}
	if !failed {
		b.fails, b.next = 0, now.Add(k.every)
		return
	}
	b.fails++
	wait := max(k.every, failedAfter) << min(b.fails-1, 6)
	b.next = now.Add(min(wait, failedMax))
}

// markRefresh flags e to be read again, waking the loop only when its key may be read now: a
// wake before that would run an empty pass, and the loop's timer, re-armed after every pass,
// would put the read off further.
func (k *topFlowKeep) markRefresh(e *keptFlows, now time.Time) {
	k.mu.Lock()
	was := e.refresh
	e.refresh = true
	due := k.due(keptKey(setKey(e.chains, e.tokens), e.from), now)
	k.mu.Unlock()
	if !was && due {
		k.signal()
	}
}

// TopFlowsWake is signalled when a request found no kept sums of its window, or kept sums a
// close or a late copy left behind: RefreshTopFlows has work.
func (s *Store) TopFlowsWake() <-chan struct{} {
	if s.tf == nil {
		return nil
	}
	return s.tf.wake
}

// KeptTopFlowAnswers is how many top_flow answers came from kept sums (0 when none are kept), so
// tests outside the package can tell the kept path was taken.
func (s *Store) KeptTopFlowAnswers() int64 {
	if s.tf == nil {
		return 0
	}
	return s.tf.hits.Load()
}

// topFlowsKept answers the window from start (at most an hour before e's from: the transfers of
// the partial hour between are the request's own) from e: ok false when e's closed rows changed
// since it was read.
func (s *Store) topFlowsKept(ctx context.Context, e *keptFlows, start time.Time, limit int) ([]app.AddressFlow, bool, error) {
	rows, err := s.pool.Query(ctx, sqlTopFlowOpen, e.chains, e.tokens, e.from, e.rolled, start)
	if err != nil {
		return nil, false, fmt.Errorf("top flows: %w", err)
	}
	m := newFlowMerge(e)
	rolled, versions, err := m.scan(rows)
	if err != nil {
		return nil, false, fmt.Errorf("top flows: %w", err)
	}
	if !slices.Equal(versions, e.versions) || len(rolled) != len(e.rolled) {
		s.tf.markRefresh(e, s.now())
		return nil, false, nil
	}
	for i, r := range rolled {
		if r.Before(e.rolled[i]) { // never back: a mark moved back by hand
			s.tf.markRefresh(e, s.now())
			return nil, false, nil
		}
		if r.After(e.rolled[i]) {
			s.tf.markRefresh(e, s.now()) // hours closed since: read from flows until read again
		}
	}
	s.tf.hits.Add(1)
	out, err := s.flowInfo(ctx, e.chains, m.top(limit))
	return out, err == nil, err
}

// flowMerge adds a request's open transfers to kept sums. It holds only the addresses the
// transfers touch (a kept address's row starts from its kept sums), so a request allocates for
// those and not for every kept row (TestFlowMergeBytesNotOfKeptRows).
type flowMerge struct {
	e    *keptFlows
	slot []map[string]int32 // per chain rank n - 1: a touched address's row in rows
	rows []flowRow          // the touched addresses
	// the window's volume (USD, units) and transfers, which residues are read against
	volume    flowSum
	transfers int64
}

func newFlowMerge(e *keptFlows) *flowMerge {
	return &flowMerge{e: e}
}

// add adds d to the address addr (its bytes) of chain rank n.
func (m *flowMerge) add(n int32, addr []byte, d flowSum) {
	for len(m.slot) < int(n) {
		m.slot = append(m.slot, map[string]int32{})
	}
	j, ok := m.slot[n-1][string(addr)] // no copy of addr for the lookup
	if !ok {
		r, kept := m.e.row(n, addr)
		if !kept {
			r = flowRow{key: addrKey{n: n, addr: string(addr)}}
		}
		j = int32(len(m.rows))
		m.slot[n-1][r.key.addr] = j // a kept address's key is the kept row's string
		m.rows = append(m.rows, r)
	}
	m.rows[j].sum.add(d)
}

// touched is whether a request's transfers touched the kept row r.
func (m *flowMerge) touched(r *flowRow) bool {
	if int(r.key.n) > len(m.slot) {
		return false
	}
	_, ok := m.slot[r.key.n-1][r.key.addr]
	return ok
}

// row is the kept row of addr of chain rank n, if kept.
func (e *keptFlows) row(n int32, addr []byte) (flowRow, bool) {
	if int(n) > len(e.index) {
		return flowRow{}, false
	}
	i, ok := e.index[n-1][string(addr)]
	if !ok {
		return flowRow{}, false
	}
	return e.rows[i], true
}

// scan adds top_flow_open.sql's transfers and returns its stamp. The transfers' columns are
// read from their binary form (the rank an int4, the amounts float8, the addresses' bytes),
// without a string per address the kept sums hold: the most of a busy token's request.
func (m *flowMerge) scan(rows pgx.Rows) (rolled []time.Time, versions []int64, err error) {
	defer rows.Close()
	fds := rows.FieldDescriptions()
	for _, c := range []int{0, 3, 4} {
		if fds[c].Format != pgx.BinaryFormatCode {
			return nil, nil, fmt.Errorf("top_flow_open.sql: column %s not in binary form", fds[c].Name)
		}
	}
	for rows.Next() {
		raw := rows.RawValues()
		if raw[0] == nil {
			if err := rows.Scan(nil, nil, nil, &m.volume.inUSD, &m.volume.inValue, &rolled, &versions, &m.transfers); err != nil {
				return nil, nil, err
			}
			continue
		}
		if len(raw[0]) != 4 || len(raw[3]) != 8 || len(raw[4]) != 8 {
			return nil, nil, fmt.Errorf("top_flow_open.sql: unexpected binary widths")
		}
		n := int32(binary.BigEndian.Uint32(raw[0]))
		usd := math.Float64frombits(binary.BigEndian.Uint64(raw[3]))
		value := math.Float64frombits(binary.BigEndian.Uint64(raw[4]))
		m.add(n, raw[2], flowSum{inUSD: usd, inValue: value})
		m.add(n, raw[1], flowSum{outUSD: usd, outValue: value})
	}
	return rolled, versions, rows.Err()
}

// top returns the limit rows with the most flow: of the touched and new addresses, and of the
// first limit untouched kept ones (no later untouched one can come before them). Amounts are
// read as top_flow.sql reads them (settle).
func (m *flowMerge) top(limit int) []flowRow {
	h := make(flowHeap, 0, limit+1)
	if m.transfers == 0 {
		return h // no transfer counts in the window
	}
	for _, r := range m.rows {
		if r, ok := m.settle(r); ok {
			h.offer(r, limit)
		}
	}
	taken := 0
	for i := range m.e.rows {
		if taken == limit {
			break
		}
		if m.touched(&m.e.rows[i]) {
			continue
		}
		if r, ok := m.settle(m.e.rows[i]); ok {
			h.offer(r, limit)
			taken++
		}
	}
	slices.SortFunc(h, flowRowCmp)
	return h
}

// settle is r with its amounts at most app.ResidueTolerance of the window's volume read as zero
// and its total of those; ok false when all are zero: it moved nothing in the window, as
// top_flow.sql leaves it out.
func (m *flowMerge) settle(r flowRow) (flowRow, bool) {
	s := &r.sum
	s.inUSD, s.outUSD = app.Settle(s.inUSD, m.volume.inUSD), app.Settle(s.outUSD, m.volume.inUSD)
	s.inValue, s.outValue = app.Settle(s.inValue, m.volume.inValue), app.Settle(s.outValue, m.volume.inValue)
	r.total = s.inUSD + s.outUSD
	return r, *s != (flowSum{})
}

// flowHeap keeps the best limit rows offered: a heap whose root is the worst of them.
type flowHeap []flowRow

func (h *flowHeap) offer(r flowRow, limit int) {
	s := *h
	if len(s) == limit {
		if !flowRowBefore(&r, &s[0]) {
			return
		}
		s[0] = r
		s.down(0)
		return
	}
	s = append(s, r)
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !flowRowBefore(&s[p], &s[i]) {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
	*h = s
}

func (h flowHeap) down(i int) {
	for {
		w, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && flowRowBefore(&h[w], &h[l]) {
			w = l
		}
		if r < len(h) && flowRowBefore(&h[w], &h[r]) {
			w = r
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// chainsByRank are the distinct chains of a set in byte order: n - 1 indexes them.
func chainsByRank(chains []string) []string {
	cs := slices.Clone(chains)
	slices.Sort(cs)
	return slices.Compact(cs)
}

// flowInfo adds the chain and attribution of each row (top_flow_info.sql).
func (s *Store) flowInfo(ctx context.Context, chains []string, top []flowRow) ([]app.AddressFlow, error) {
	byRank := chainsByRank(chains)
	out := make([]app.AddressFlow, len(top))
	cs, as := make([]string, len(top)), make([]string, len(top))
	for i, r := range top {
		cs[i], as[i] = byRank[r.key.n-1], r.key.addr
		out[i] = app.AddressFlow{Chain: cs[i], Address: as[i], InUSD: r.sum.inUSD, InValue: r.sum.inValue,
			OutUSD: r.sum.outUSD, OutValue: r.sum.outValue}
	}
	if len(top) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, sqlTopFlowInfo, cs, as)
	if err != nil {
		return nil, fmt.Errorf("top flows: %w", err)
	}
	infos, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, fmt.Errorf("top flows: %w", err)
	}
	for i, info := range infos {
		if info != nil {
			out[i].Attribution = &app.AddressAttribution{}
			if err := json.Unmarshal(info, out[i].Attribution); err != nil {
				return nil, fmt.Errorf("top flows: %w", err)
			}
		}
	}
	return out, nil
}

// scanFlowRows reads top_flow_closed.sql's or top_flow_open.sql's rows: the per-address sums and
// the stamp row.
func scanFlowRows(rows pgx.Rows) (out []flowRow, rolled []time.Time, versions []int64, err error) {
	defer rows.Close()
	for rows.Next() {
		var n *int32
		var addr *string
		var r flowRow
		var rs []time.Time
		var vs []int64
		if err := rows.Scan(&n, &addr, &r.sum.inUSD, &r.sum.inValue, &r.sum.outUSD, &r.sum.outValue, &rs, &vs); err != nil {
			return nil, nil, nil, err
		}
		if n == nil {
			rolled, versions = rs, vs
			continue
		}
		r.key = addrKey{n: *n, addr: *addr}
		out = append(out, r)
	}
	return out, rolled, versions, rows.Err()
}

// buildKept reads the closed sums of a set since from.
func (s *Store) buildKept(ctx context.Context, chains, tokens []string, from time.Time) (*keptFlows, error) {
	rows, err := s.pool.Query(ctx, sqlTopFlowClosed, chains, tokens, from)
	if err != nil {
		return nil, fmt.Errorf("top flows kept: %w", err)
	}
	rs, rolled, versions, err := scanFlowRows(rows)
	if err != nil {
		return nil, fmt.Errorf("top flows kept: %w", err)
	}
	for i := range rs {
		rs[i].total = rs[i].sum.inUSD + rs[i].sum.outUSD
	}
	slices.SortFunc(rs, flowRowCmp)
	e := &keptFlows{chains: chains, tokens: tokens, from: from, rolled: rolled, versions: versions, rows: rs,
		index: make([]map[string]int32, len(chainsByRank(chains)))}
	for i := range e.index {
		e.index[i] = map[string]int32{}
	}
	for i, r := range rs {
		e.index[r.key.n-1][r.key.addr] = int32(i)
	}
	return e, nil
}

// TopFlowsRefreshed is what one RefreshTopFlows did.
type TopFlowsRefreshed struct {
	Built, Failed, Kept, Addresses int // sums read, reads failed, sums kept now, their addresses
}

// RefreshTopFlows reads again the kept sums requests found behind (a close since, a changed
// version), reads those of sets and windows asked for in the last wantedFor that have none (the
// window's start moved with the hour, or nothing was kept yet), and from the last tenth of an
// hour on those of the next hour's start too, so the hour's turn finds them; it drops the sums
// no window asked for needs. Sets with fewer closed addresses than the minimum are not kept
// (top_flow.sql answers them fast enough) and not read again for lightFor. Each set and window
// start is read at most once per the rebuild interval, and after a failed read not before its
// retry (keptBuild); a failed read does not stop the others, and the failures are returned
// joined.
func (s *Store) RefreshTopFlows(ctx context.Context) (TopFlowsRefreshed, error) {
	var r TopFlowsRefreshed
	if s.tf == nil {
		return r, nil
	}
	now := s.now()
	todo, needed := s.tf.plan(now, s.FlowHorizon())
	var errs []error
	for _, t := range todo {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		e, err := s.tf.read(ctx, t.w.chains, t.w.tokens, t.from)
		// The interval runs from the end of this read, not the pass's start, so a long pass
		// does not shorten it.
		s.tf.built(t.key, s.now(), err != nil)
		if err != nil {
			r.Failed++
			errs = append(errs, fmt.Errorf("top flows kept of %v %v from %s: %w", t.w.chains, t.w.tokens, t.from.Format(time.RFC3339), err))
			continue
		}
		r.Built++
		s.tf.install(t, e, now)
	}
	r.Kept, r.Addresses = s.tf.prune(needed)
	return r, errors.Join(errs...)
}

type keptTodo struct {
	w    *wantedFlows
	from time.Time
	key  string
}

// plan lists the sums to read and the keys of those still needed.
func (k *topFlowKeep) plan(now, horizon time.Time) ([]keptTodo, map[string]bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	hour := now.Truncate(time.Hour)
	starts := []time.Time{hour}
	if now.Sub(hour) >= time.Hour*9/10 {
		starts = append(starts, hour.Add(time.Hour))
	}
	var todo []keptTodo
	needed := map[string]bool{}
	for wk, w := range k.wanted {
		if now.Sub(w.asked) > wantedFor {
			delete(k.wanted, wk)
			continue
		}
		set := setKey(w.chains, w.tokens)
		for _, h := range starts {
			from := h.Add(-w.back)
			if from.Before(horizon) {
				continue
			}
			key := keptKey(set, from)
			needed[key] = true
			e := k.kept[key]
			if ((e == nil && now.Sub(w.light) >= lightFor) || (e != nil && e.refresh)) && k.due(key, now) {
				todo = append(todo, keptTodo{w: w, from: from, key: key})
			}
		}
	}
	return todo, needed
}

// install keeps e when it has at least the minimum of addresses and fits the budget; a set that
// does not is answered by top_flow.sql and not read again for lightFor.
func (k *topFlowKeep) install(t keptTodo, e *keptFlows, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.kept, t.key) // the copy read before, if any, is behind
	if len(e.rows) < k.min {
		t.w.light = now
		return
	}
	total := len(e.rows)
	for _, o := range k.kept {
		total += len(o.rows)
	}
	if total > k.budget {
		t.w.light = now // not read again for lightFor either
		return
	}
	k.kept[t.key] = e
}

// prune drops the sums, and the reads' records, no wanted window needs and returns what is kept.
func (k *topFlowKeep) prune(needed map[string]bool) (kept, addresses int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for key := range k.builds {
		if !needed[key] {
			delete(k.builds, key)
		}
	}
	for key, e := range k.kept {
		if !needed[key] {
			delete(k.kept, key)
			continue
		}
		kept++
		addresses += len(e.rows)
	}
	return kept, addresses
}
