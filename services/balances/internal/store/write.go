package store

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Observation is an exact balance read at a block.
type Observation struct {
	Chain, Address, Token string // Token "" is the native coin
	BlockNumber           int64
	BlockHash             string
	BlockTime             time.Time
	Balance               *big.Int
	Owner, Kind           string // Solana-style subaccounts: owner and "stake" or "lending"
	TokenID, TokenName    string
	TokenSymbol           string
	TokenDecimals         int32
}

// Key names one balance: an address's holding of a token on a chain.
type Key struct{ Chain, Address, Token string }

// Current is a key's current balance row.
type Current struct {
	Key
	BlockNumber int64
	BlockHash   string
	BlockTime   time.Time
	Balance     *big.Int
	Owner, Kind string
}

var obsCols = []string{"chain", "address", "token", "block_number", "block_hash", "block_time", "balance", "owner", "kind"}

// AppendObservations stores a batch: one COPY into observations and the token metadata it
// carried, in one transaction that waits only for another append (sql/append_lock.sql).
// Nothing is derived here, so the consumer commits its offsets at the speed of COPY;
// ApplyPending folds what was appended into the read models. A redelivered batch is stored
// twice and changes no figure.
func (s *Store) AppendObservations(ctx context.Context, obs []Observation) error {
	if len(obs) == 0 {
		return nil
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, q("append_lock")); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"balances", "observations"}, obsCols, copyObservations(obs)); err != nil {
			return err
		}
		if args := tokenArgs(obs); args != nil {
			_, err := tx.Exec(ctx, q("observed_tokens"), args...)
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append observations: %w", err)
	}
	return nil
}

// tokenArgs are observed_tokens' arguments: the metadata of each token of obs as its newest
// observation by block carried it (nil: only native coins).
func tokenArgs(obs []Observation) []any {
	newest := map[[2]string]Observation{}
	for _, o := range obs {
		k := [2]string{o.Chain, o.Token}
		if o.Token == "" {
			continue
		}
		if n, ok := newest[k]; !ok || o.BlockNumber > n.BlockNumber {
			newest[k] = o
		}
	}
	if len(newest) == 0 {
		return nil
	}
	var cs, ts, ids, names, syms []string
	var decs []int32
	for _, o := range newest {
		cs, ts, ids, names, syms = append(cs, o.Chain), append(ts, o.Token), append(ids, o.TokenID), append(names, o.TokenName), append(syms, o.TokenSymbol)
		decs = append(decs, o.TokenDecimals)
	}
	return []any{cs, ts, ids, names, syms, decs}
}

// WriteObservations appends a batch and applies every observation appended up to it
// (ApplyPending until nothing waits), so the batch is in the read models when it returns: the
// path tests and the bench's history take. It returns how many observations the rounds applied (void ones
// excepted, duplicates included).
func (s *Store) WriteObservations(ctx context.Context, obs []Observation) (int, error) {
	if err := s.AppendObservations(ctx, obs); err != nil {
		return 0, err
	}
	n := 0
	for {
		taken, fresh, err := s.ApplyPending(ctx, applyRound)
		n += fresh
		if err != nil || taken < applyRound {
			return n, err
		}
	}
}

// applyRound is the most observations WriteObservations applies in one transaction.
const applyRound = 20000

// ApplyPending takes up to limit observations past the applier's mark and folds them into
// current balances, snapshots, supplies and entity rows, in one transaction under the writers' lock
// that also moves the mark (so a crash leaves them to the next round). An observation older (by
// block) than a key's current balance or its day's snapshot, or already applied (redelivered),
// only joins the history. It returns how many it took (0: none waited) and how many of those
// were not void.
func (s *Store) ApplyPending(ctx context.Context, limit int) (taken, fresh int, err error) {
	var pending bool
	if err := s.pool.QueryRow(ctx, q("pending")).Scan(&pending); err != nil || !pending {
		return 0, 0, err
	}
	err = s.write(ctx, "apply observations", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, q("apply_settings")); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, q("stage_fresh")); err != nil {
			return err
		}
		var t, f int64
		if err := tx.QueryRow(ctx, q("take_observations"), limit).Scan(&t, &f); err != nil {
			return err
		}
		taken, fresh = int(t), int(f)
		if fresh == 0 {
			return nil
		}
		return s.applyFresh(ctx, tx)
	})
	return taken, fresh, err
}

// Backlog is how many observations are appended and not applied yet.
func (s *Store) Backlog(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, q("backlog")).Scan(&n)
	return n, err
}

func copyObservations(obs []Observation) pgx.CopyFromSource {
	return pgx.CopyFromSlice(len(obs), func(i int) ([]any, error) {
		o := obs[i]
		return []any{o.Chain, o.Address, o.Token, o.BlockNumber, o.BlockHash, o.BlockTime, pgtype.Numeric{Int: o.Balance, Valid: true},
			o.Owner, o.Kind}, nil
	})
}

// applyFresh applies the observations in fresh_obs: one round trip for the derived rows of keys
// no entity holds (set_current.sql: current, the snapshots of days other than the current row's,
// supply and top holders, newest-block rules in SQL), and the observations of held keys back for
// the full path.
func (s *Store) applyFresh(ctx context.Context, tx pgx.Tx) error {
	b := &pgx.Batch{}
	b.Queue(q("set_current"))
	b.Queue(q("fresh_tokens"))
	b.Queue(q("read_fresh_held"))
	br := tx.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return err
	}
	tokens, err := scanRows(br, scanTokens)
	if err != nil {
		br.Close()
		return err
	}
	held, err := scanRows(br, scanCurrent)
	if err != nil {
		br.Close()
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}
	if err := s.apply(ctx, tx, heldPlans(held), false); err != nil {
		return err
	}
	return keepTop(ctx, tx, tokens)
}

// HoldersDepth is how deep /token/holders reads (offset + limit): top_holders keeps at least
// that many rows of a token above a floor (see migrations/00005_top_holders.sql).
const HoldersDepth = 1000

// keepTop trims the top_holders of tokens that grew over three times HoldersDepth rows and
// refills from current those that fell under HoldersDepth above a floor.
func keepTop(ctx context.Context, tx pgx.Tx, tokens [][2]string) error {
	if len(tokens) == 0 {
		return nil
	}
	cs, ts := make([]string, len(tokens)), make([]string, len(tokens))
	for i, t := range tokens {
		cs[i], ts[i] = t[0], t[1]
	}
	if _, err := tx.Exec(ctx, q("top_trim"), cs, ts, HoldersDepth); err != nil {
		return err
	}
	rows, err := tx.Query(ctx, q("top_short"), cs, ts, HoldersDepth)
	if err != nil {
		return err
	}
	short, err := scanTokens(rows)
	if err != nil {
		return err
	}
	for _, t := range short {
		if _, err := tx.Exec(ctx, q("top_refill"), t[0], t[1], HoldersDepth); err != nil {
			return err
		}
	}
	return nil
}

func scanTokens(rows pgx.Rows) ([][2]string, error) {
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var t [2]string
		if err := rows.Scan(&t[0], &t[1]); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// heldPlans groups new observations of held keys by key: the candidate snapshots, the oldest
// day they touch and the newest observation.
func heldPlans(fresh []Current) map[Key]*plan {
	plans := map[Key]*plan{}
	for _, c := range fresh {
		p := plans[c.Key]
		if p == nil {
			p = &plan{since: Day(c.BlockTime)}
			plans[c.Key] = p
		}
		if d := Day(c.BlockTime); d.Before(p.since) {
			p.since = d
		}
		p.cands = append(p.cands, Point{Day: Day(c.BlockTime), Block: c.BlockNumber, Balance: c.Balance})
		if p.top == nil || c.BlockNumber > p.top.BlockNumber {
			cc := c
			p.top = &cc
		}
	}
	return plans
}

// plan is what a write does to one key.
type plan struct {
	since time.Time
	// Observations: candidate snapshots and the newest new observation. Reorg: the rebuilt
	// snapshots from since on and the newest surviving observation (nil: none survives).
	cands []Point
	top   *Current
}

func scanCurrent(rows pgx.Rows) ([]Current, error) {
	var out []Current
	for rows.Next() {
		var c Current
		var bal string
		if err := rows.Scan(&c.Chain, &c.Address, &c.Token, &c.BlockNumber, &c.BlockHash, &c.BlockTime, &bal, &c.Owner, &c.Kind); err != nil {
			return nil, err
		}
		v, err := parseInt(bal)
		if err != nil {
			return nil, err
		}
		c.Balance = v
		out = append(out, c)
	}
	return out, rows.Err()
}

// keyArrays splits keys into parallel arrays for unnest.
func keyArrays(keys []Key) (cs, as, ts []string) {
	for _, k := range keys {
		cs, as, ts = append(cs, k.Chain), append(as, k.Address), append(ts, k.Token)
	}
	return
}

func sortedKeys(plans map[Key]*plan) []Key {
	keys := make([]Key, 0, len(plans))
	for k := range plans {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Chain != b.Chain {
			return a.Chain < b.Chain
		}
		if a.Address != b.Address {
			return a.Address < b.Address
		}
		return a.Token < b.Token
	})
	return keys
}

const dateFmt = "2006-01-02"

// dailyArgs are load_daily's (and surviving_daily's) arguments for keys.
func dailyArgs(keys []Key, plans map[Key]*plan) []any {
	cs, as, ts := keyArrays(keys)
	since := make([]string, len(keys))
	for i, k := range keys {
		since[i] = plans[k].since.Format(dateFmt)
	}
	return []any{cs, as, ts, since}
}

// loadDaily reads each key's snapshots with statement name.
func (s *Store) loadDaily(ctx context.Context, tx pgx.Tx, name string, keys []Key, plans map[Key]*plan) (map[Key][]Point, error) {
	rows, err := tx.Query(ctx, q(name), dailyArgs(keys, plans)...)
	if err != nil {
		return nil, err
	}
	return scanDaily(rows)
}

func scanDaily(rows pgx.Rows) (map[Key][]Point, error) {
	defer rows.Close()
	out := map[Key][]Point{}
	for rows.Next() {
		var k Key
		var day time.Time
		var block int64
		var bal string
		var stored bool
		if err := rows.Scan(&k.Chain, &k.Address, &k.Token, &day, &block, &bal, &stored); err != nil {
			return nil, err
		}
		v, err := parseInt(bal)
		if err != nil {
			return nil, err
		}
		out[k] = append(out[k], Point{Day: Day(day), Block: block, Balance: v, stored: stored})
	}
	for k := range out {
		ps := out[k]
		sort.Slice(ps, func(i, j int) bool { return ps[i].Day.Before(ps[j].Day) })
	}
	return out, rows.Err()
}

// memberArgs are load_members' arguments: each key's address once.
func memberArgs(keys []Key) []any {
	seen := map[[2]string]bool{}
	var cts, as []string
	for _, k := range keys {
		r := [2]string{ChainType(k.Chain), k.Address}
		if !seen[r] {
			seen[r] = true
			cts, as = append(cts, r[0]), append(as, r[1])
		}
	}
	return []any{cts, as}
}

// scanMembers reads the operator entity of each address.
func scanMembers(rows pgx.Rows) (map[[2]string]string, error) {
	defer rows.Close()
	out := map[[2]string]string{}
	for rows.Next() {
		var ct, a, e string
		if err := rows.Scan(&ct, &a, &e); err != nil {
			return nil, err
		}
		out[[2]string{ct, a}] = e
	}
	return out, rows.Err()
}

// scanRows reads the batch's next result with scan.
func scanRows[T any](br pgx.BatchResults, scan func(pgx.Rows) (T, error)) (T, error) {
	rows, err := br.Query()
	if err != nil {
		var zero T
		return zero, err
	}
	return scan(rows)
}

// writes collects the rows a batch changes, as parallel arrays for unnest.
type writes struct {
	cur        [9][]any
	curDel     [3][]string
	daily      [6][]any
	dailyDel   [4][]string
	supply     map[[2]string]*big.Int
	entChange  map[[4]string]*big.Int // entity, chain, token, day
	entCurrent map[[3]string]*big.Int
}

func addTo[K comparable](m map[K]*big.Int, k K, v *big.Int) {
	if v.Sign() == 0 {
		return
	}
	if x, ok := m[k]; ok {
		x.Add(x, v)
		return
	}
	m[k] = new(big.Int).Set(v)
}

// apply turns plans into writes: the current row, the snapshots from each plan's day on, the
// supply, and the changes of the key's entity. replace says the plans hold rebuilt snapshots
// (a reorg) rather than candidates.
func (s *Store) apply(ctx context.Context, tx pgx.Tx, plans map[Key]*plan, replace bool) error {
	if len(plans) == 0 {
		return nil
	}
	keys := sortedKeys(plans)
	cs, as, ts := keyArrays(keys)
	// The three reads go in one round trip.
	b := &pgx.Batch{}
	b.Queue(q("load_current"), cs, as, ts)
	b.Queue(q("load_daily"), dailyArgs(keys, plans)...)
	b.Queue(q("load_members"), memberArgs(keys)...)
	br := tx.SendBatch(ctx, b)
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return err
	}
	olds, err := scanCurrent(rows)
	if err != nil {
		br.Close()
		return err
	}
	oldCur := make(map[Key]Current, len(olds))
	for _, c := range olds {
		oldCur[c.Key] = c
	}
	daily, err := scanRows(br, scanDaily)
	if err != nil {
		br.Close()
		return err
	}
	ents, err := scanRows(br, scanMembers)
	if err != nil {
		br.Close()
		return err
	}
	if err := br.Close(); err != nil {
		return err
	}
	w := writes{supply: map[[2]string]*big.Int{}, entChange: map[[4]string]*big.Int{}, entCurrent: map[[3]string]*big.Int{}}
	for _, k := range keys {
		s.planKey(k, plans[k], oldCur, daily[k], ents[[2]string{ChainType(k.Chain), k.Address}], replace, &w)
	}
	return s.flush(ctx, tx, &w)
}

// planKey adds one key's changes to w.
func (s *Store) planKey(k Key, p *plan, oldCur map[Key]Current, before []Point, entity string, replace bool, w *writes) {
	var after []Point
	if replace {
		for _, pt := range before {
			if pt.Day.Before(p.since) {
				after = append(after, pt)
			}
		}
		after = append(after, p.cands...)
	} else {
		after = Merge(before, p.cands)
	}
	curDay := planCurrent(k, p, oldCur, replace, w)
	planDays(k, before, after, curDay, w)
	if entity == "" {
		return
	}
	deltas, final := Diff(before, after)
	for _, d := range deltas {
		addTo(w.entChange, [4]string{entity, k.Chain, k.Token, d.Day.Format(dateFmt)}, d.Delta)
	}
	ek := [3]string{entity, k.Chain, k.Token}
	addTo(w.entCurrent, ek, final)
	if _, ok := w.entCurrent[ek]; !ok && len(deltas) > 0 {
		// A row at 0 too: read_entity_back.sql counts an entity's past back from its rows of
		// entity_current, so every token it has changes of needs one.
		w.entCurrent[ek] = new(big.Int)
	}
}

// planCurrent adds the key's current row and supply changes to w and returns the day of the
// current row the write leaves (zero: none).
func planCurrent(k Key, p *plan, oldCur map[Key]Current, replace bool, w *writes) time.Time {
	old, had := oldCur[k]
	oldBal := new(big.Int)
	var day time.Time
	if had {
		oldBal, day = old.Balance, Day(old.BlockTime)
	}
	switch {
	case replace && p.top == nil:
		if had {
			w.curDel[0], w.curDel[1], w.curDel[2] = append(w.curDel[0], k.Chain), append(w.curDel[1], k.Address), append(w.curDel[2], k.Token)
			addTo(w.supply, [2]string{k.Chain, k.Token}, new(big.Int).Neg(oldBal))
		}
		return time.Time{}
	case p.top != nil && (replace || !had || p.top.BlockNumber > old.BlockNumber):
		t := p.top
		for i, v := range []any{k.Chain, k.Address, k.Token, t.BlockNumber, t.BlockHash, t.BlockTime, t.Balance.String(), t.Owner, t.Kind} {
			w.cur[i] = append(w.cur[i], v)
		}
		addTo(w.supply, [2]string{k.Chain, k.Token}, new(big.Int).Sub(t.Balance, oldBal))
		return Day(t.BlockTime)
	}
	return day
}

// planDays adds to w the snapshot rows that turn before into after. A point of before held only
// by the old current row counts as absent on any day but curDay (the day of the current row the
// write leaves): once the current row is of another day, or gone, address_daily must hold it.
func planDays(k Key, before, after []Point, curDay time.Time, w *writes) {
	beforeBy := make(map[time.Time]Point, len(before))
	for _, pt := range before {
		beforeBy[pt.Day] = pt
	}
	afterBy := make(map[time.Time]bool, len(after))
	for _, pt := range after {
		afterBy[pt.Day] = true
		if b, ok := beforeBy[pt.Day]; ok && b.Block == pt.Block && b.Balance.Cmp(pt.Balance) == 0 && (b.stored || pt.Day.Equal(curDay)) {
			continue
		}
		for i, v := range []any{k.Chain, k.Address, k.Token, pt.Day.Format(dateFmt), pt.Block, pt.Balance.String()} {
			w.daily[i] = append(w.daily[i], v)
		}
	}
	for _, pt := range before {
		if !afterBy[pt.Day] {
			w.dailyDel[0], w.dailyDel[1] = append(w.dailyDel[0], k.Chain), append(w.dailyDel[1], k.Address)
			w.dailyDel[2], w.dailyDel[3] = append(w.dailyDel[2], k.Token), append(w.dailyDel[3], pt.Day.Format(dateFmt))
		}
	}
}

// flush writes w.
func (s *Store) flush(ctx context.Context, tx pgx.Tx, w *writes) error {
	b := &pgx.Batch{}
	if len(w.curDel[0]) > 0 {
		b.Queue(q("delete_current"), w.curDel[0], w.curDel[1], w.curDel[2])
	}
	if len(w.cur[0]) > 0 {
		b.Queue(q("upsert_current"), w.cur[0], w.cur[1], w.cur[2], w.cur[3], w.cur[4], w.cur[5], w.cur[6], w.cur[7], w.cur[8])
	}
	if n := len(w.cur[0]) + len(w.curDel[0]); n > 0 {
		// top_holders follows: the new balances, and 0 for the keys that lost their row.
		cs, as, ts, bs := make([]any, 0, n), make([]any, 0, n), make([]any, 0, n), make([]any, 0, n)
		cs, as, ts, bs = append(cs, w.cur[0]...), append(as, w.cur[1]...), append(ts, w.cur[2]...), append(bs, w.cur[6]...)
		for i := range w.curDel[0] {
			cs, as, ts, bs = append(cs, w.curDel[0][i]), append(as, w.curDel[1][i]), append(ts, w.curDel[2][i]), append(bs, "0")
		}
		b.Queue(q("top_set"), cs, as, ts, bs)
	}
	if len(w.dailyDel[0]) > 0 {
		b.Queue(q("delete_daily"), w.dailyDel[0], w.dailyDel[1], w.dailyDel[2], w.dailyDel[3])
	}
	if len(w.daily[0]) > 0 {
		b.Queue(q("upsert_daily"), w.daily[0], w.daily[1], w.daily[2], w.daily[3], w.daily[4], w.daily[5])
	}
	if len(w.supply) > 0 {
		var c, t, v []string
		for k, x := range w.supply {
			c, t, v = append(c, k[0]), append(t, k[1]), append(v, x.String())
		}
		b.Queue(q("add_supply"), c, t, v)
	}
	if len(w.entChange) > 0 {
		var e, c, t, d, v []string
		for k, x := range w.entChange {
			e, c, t, d, v = append(e, k[0]), append(c, k[1]), append(t, k[2]), append(d, k[3]), append(v, x.String())
		}
		b.Queue(q("add_entity_change"), e, c, t, d, v)
	}
	if len(w.entCurrent) > 0 {
		var e, c, t, v []string
		for k, x := range w.entCurrent {
			e, c, t, v = append(e, k[0]), append(c, k[1]), append(t, k[2]), append(v, x.String())
		}
		b.Queue(q("add_entity_current"), e, c, t, v)
	}
	if b.Len() == 0 {
		return nil
	}
	return tx.SendBatch(ctx, b).Close()
}
