package store_test

import (
	"cmp"
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Keyset page turns of a live entity with more transfers than the count's cap: a window up to a
// time inside an hour (timeLte, newest first) or from one (timeGte, oldest first). The count is
// read a span of days at a time, newest first, and stops at the cap; the hour a window cuts is
// counted through the entity's pair rows; the page's first read counts that hour's pair rows by
// the part of it inside the window. Each page and count must equal the brute-force answer:
// below the cap, at it, and across the month the transfers straddle; and so must pages of
// random sizes at random times.
func TestKeysetPagesOfABusyEntity(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	// Count spans of 1, 4 and 16 days, then the rest.
	st, addr, now := entityXXOn(t, pool, 0x1000, func(o *store.Options) { o.CountChunkDays = 1 })
	x1, x2 := addr(1), addr(2)
	ex := &store.Entity{ID: "xx", Name: "XX", Type: "cex"}
	// 12,000 transfers over six days around the end of January, busier on some hours than
	// others; a tenth between two outside addresses.
	start := time.Date(2026, 1, 28, 0, 0, 0, 0, time.UTC)
	src := rand.NewPCG(5, 6)
	rng := rand.New(src)
	var all []store.TransferRow
	for i := 0; i < 12000; i++ {
		h := fmt.Sprintf("0x%064x", i+1)
		at := start.Add(time.Duration(rng.IntN(6*24*3600)) * time.Second)
		if i%4 == 0 { // a busy hour each day
			at = start.Add(time.Duration(rng.IntN(6))*24*time.Hour + 13*time.Hour + time.Duration(rng.IntN(3600))*time.Second)
		}
		own, other := []string{x1, x2}[i%2], addr(100+rng.IntN(300))
		from, to := own, other
		switch {
		case i%10 == 1:
			from, to = addr(500+rng.IntN(50)), other
		case i%3 == 0:
			from, to = other, own
		}
		all = append(all, store.TransferRow{Chain: []string{"ethereum", "base"}[i%2], ID: h + "_0", TxHash: h, BlockHash: h,
			BlockNumber: int64(i), BlockTime: at, From: from, To: to, TokenID: "ethereum", TokenSymbol: "ETH", TokenDecimals: 18,
			Amount: big.NewInt(1), UnitValue: 1})
	}
	for i := 0; i < len(all); i += 5000 {
		if _, err := st.WriteTransfers(ctx, all[i:min(i+5000, len(all))]); err != nil {
			t.Fatal(err)
		}
	}
	newest := func(a, b store.TransferRow) int {
		return cmp.Or(b.BlockTime.Compare(a.BlockTime), cmp.Compare(b.Chain, a.Chain), cmp.Compare(b.ID, a.ID))
	}
	own := func(a string) bool { return a == x1 || a == x2 }
	capped := 0
	for _, flow := range []string{"all", "in", "out"} {
		for _, w := range []struct {
			from, to time.Time
			dir      string
		}{
			{to: start.Add(5*24*time.Hour + 13*time.Hour + 41*time.Minute + 7*time.Second), dir: "desc"}, // inside a busy hour
			{to: start.Add(5*24*time.Hour + 13*time.Hour + 2*time.Minute), dir: "desc"},                  // its first minutes
			{to: start.Add(4*24*time.Hour - time.Millisecond), dir: "desc"},                              // a whole day's end
			{to: start.Add(2*24*time.Hour + 7*time.Hour + 30*time.Minute), dir: "desc"},                  // below the cap
			{to: start.Add(6 * 24 * time.Hour), dir: "desc"},                                             // everything
			{from: start.Add(24*time.Hour + 13*time.Hour + 58*time.Minute), dir: "asc"},                  // the end of a busy hour
			{from: start.Add(3*24*time.Hour + 5*time.Hour + 20*time.Minute), to: start.Add(5*24*time.Hour + 13*time.Hour + 10*time.Minute), dir: "asc"},
		} {
			var want []store.TransferRow
			for _, r := range all {
				in := (w.from.IsZero() || !r.BlockTime.Before(w.from)) && (w.to.IsZero() || !r.BlockTime.After(w.to))
				f, t := own(r.From), own(r.To)
				match := map[string]bool{"all": f || t, "in": t && !f, "out": f && !t}[flow]
				if in && match {
					want = append(want, r)
				}
			}
			slices.SortFunc(want, newest)
			if w.dir == "asc" {
				slices.Reverse(want)
			}
			f := store.TransferFilter{Flow: flow, Base: store.AddrSet{Entities: []string{"xx"}, Size: 2}, HasBase: true, TimeFrom: w.from, TimeTo: w.to}
			list, count, err := listTransfers(ctx, st, f, store.Page{SortKey: "time", SortDir: w.dir, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			if c := min(len(want), store.MaxCount); count != c {
				t.Errorf("flow %s, %v..%v: count %d, want %d", flow, w.from, w.to, count, c)
			}
			if len(want) >= store.MaxCount {
				capped++
			}
			var got, exp []string
			for _, r := range list {
				got = append(got, r.ID)
			}
			for _, r := range want[:min(50, len(want))] {
				exp = append(exp, r.ID)
			}
			if !slices.Equal(got, exp) {
				t.Errorf("flow %s, %v..%v %s: page\n got %v\nwant %v", flow, w.from, w.to, w.dir, got, exp)
			}
		}
	}
	if capped == 0 {
		t.Fatal("no window reached the count's cap")
	}

	// Page turns at random times, of random sizes: the first pages a client paging by time asks
	// for. They are read from the pair rows that can hold them, by the bounds on their transfers'
	// times (entityPairNewestPage), which a loose or wrong bound would get wrong. Then again after a
	// relabel adds twenty counterparties to the entity: their pair rows' transfers come into its
	// pair rows without times, some into rows it had (whose bounds must then be unknown).
	// The pair rows of one transfer are read by its uid; the same pages through the addresses'
	// indexes alone, and with half the uids unknown.
	if n := entityPairUIDsHold(t, pool); n < 1000 {
		t.Fatalf("%d pair rows know their one transfer's uid, want most of the single ones", n)
	}
	state, err := src.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	again := func() *rand.Rand { // the same pages again
		p := &rand.PCG{}
		if err := p.UnmarshalBinary(state); err != nil {
			t.Fatal(err)
		}
		return rand.New(p)
	}
	randomPages(t, st, all, start, rng, own, true)
	noUIDs := newStore(pool, withGroupMin(0), func(o *store.Options) { o.CountChunkDays, o.PairUIDs = 1, false })
	randomPages(t, noUIDs, all, start, again(), own, true)
	if _, err := pool.Exec(ctx, `UPDATE transfers.entity_pair_rows SET uid = NULL WHERE hashtext(from_addr || to_addr) % 2 = 0`); err != nil {
		t.Fatal(err)
	}
	randomPages(t, st, all, start, again(), own, true)
	// And other pages (among them a page of 120 at the entity's first hours, with fewer pair rows
	// than that: read short before the pages without a cut).
	randomPages(t, st, all, start, rng, own, true)
	var more []store.Attribution
	for n := 100; n < 120; n++ {
		more = append(more, store.Attribution{ChainType: "evm", Address: addr(n), Entity: ex, Version: 1, UpdatedAt: now})
	}
	if err := st.ApplyAttributions(ctx, more, nil); err != nil {
		t.Fatal(err)
	}
	owned := func(a string) bool {
		return own(a) || slices.ContainsFunc(more, func(m store.Attribution) bool { return m.Address == a })
	}
	randomPages(t, st, all, start, rng, owned, false)
	entityPairUIDsHold(t, pool)

	// A reorg removes every seventh block: pair rows of several transfers keep bounds on times
	// that are gone, and some are left with one transfer between bounds that do not meet.
	var kept []store.TransferRow
	removed := map[string][]store.Block{}
	for i, r := range all {
		if i%7 == 3 {
			removed[r.Chain] = append(removed[r.Chain], store.Block{Number: r.BlockNumber, Hash: r.BlockHash})
		} else {
			kept = append(kept, r)
		}
	}
	for chain, blocks := range removed {
		if _, err := st.RemoveBlocks(ctx, chain, blocks, nil); err != nil {
			t.Fatal(err)
		}
	}
	randomPages(t, st, kept, start, rng, owned, false)
	entityPairUIDsHold(t, pool)

	// A relabel takes x2 out of the entity: its counts go down (a count remembered at the cap
	// must not outlive a change of membership, as it must not outlive the reorg above).
	if err := st.ApplyAttributions(ctx, []store.Attribution{
		{ChainType: "evm", Address: x2, Entity: &store.Entity{ID: "yy", Name: "YY", Type: "cex"}, Version: 2, UpdatedAt: now},
	}, nil); err != nil {
		t.Fatal(err)
	}
	randomPages(t, st, kept, start, rng, func(a string) bool { return a != x2 && owned(a) }, false)
	entityPairUIDsHold(t, pool)
}

// entityPairUIDsHold checks that every pair row holding a uid (migration 22) holds exactly that
// transfer, at its t_first, and returns how many do.
func entityPairUIDsHold(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n, wrong int
	if err := pool.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE e.n <> 1 OR NOT EXISTS (
		  SELECT 1 FROM transfers.transfers t WHERE t.block_time = e.t_first AND t.uid = e.uid AND t.from_addr = e.from_addr
		    AND t.to_addr = e.to_addr AND t.chain = e.chain AND t.token = e.token
		    AND t.block_time >= e.bucket AND t.block_time < e.bucket + interval '1 hour'))
		FROM transfers.entity_pair_rows e WHERE e.uid IS NOT NULL`).Scan(&n, &wrong); err != nil {
		t.Fatal(err)
	}
	if wrong > 0 {
		t.Fatalf("%d of %d pair rows with a uid do not hold exactly that transfer", wrong, n)
	}
	return n
}

// randomPages checks first pages of entity xx (whose addresses own tells) and their counts at
// random times of the six days from start (a third of them at or beside a transfer's time)
// against all, brute force. With known (every pair row's bounds on its
// transfers' times known, as written), a page with enough transfers must be read in one go from
// the pair rows that can hold it, not again hour by hour.
func randomPages(t *testing.T, st *store.Store, all []store.TransferRow, start time.Time, rng *rand.Rand, own func(string) bool, known bool) {
	t.Helper()
	ctx := context.Background()
	newest := func(a, b store.TransferRow) int {
		return cmp.Or(b.BlockTime.Compare(a.BlockTime), cmp.Compare(b.Chain, a.Chain), cmp.Compare(b.ID, a.ID))
	}
	for i := 0; i < 300; i++ {
		at := start.Add(time.Duration(rng.Int64N(int64(6 * 24 * time.Hour))))
		if i%3 == 0 { // at a transfer's time, or a millisecond either side
			at = all[rng.IntN(len(all))].BlockTime.Add(time.Duration(rng.IntN(3)-1) * time.Millisecond)
		}
		dir, flow, limit := []string{"desc", "asc"}[i%2], []string{"all", "in", "out"}[rng.IntN(3)], []int{1, 7, 50, 120}[rng.IntN(4)]
		// The base as the service sizes it, with the version its remembered counts go by.
		base, _, err := st.SetSize(ctx, store.AddrSet{Entities: []string{"xx"}})
		if err != nil {
			t.Fatal(err)
		}
		f := store.TransferFilter{Flow: flow, Base: base, HasBase: true}
		var want []store.TransferRow
		for _, r := range all {
			in := r.BlockTime.Compare(at) <= 0
			if dir == "asc" {
				in = r.BlockTime.Compare(at) >= 0
			}
			fo, to := own(r.From), own(r.To)
			if in && map[string]bool{"all": fo || to, "in": to && !fo, "out": fo && !to}[flow] {
				want = append(want, r)
			}
		}
		slices.SortFunc(want, newest)
		if dir == "asc" {
			slices.Reverse(want)
			f.TimeFrom = at
		} else {
			f.TimeTo = at
		}
		short := st.ShortFirstPages()
		pg, err := st.PageTransfers(ctx, f, store.Page{SortKey: "time", SortDir: dir, Limit: limit, Attributions: true})
		if err != nil {
			t.Fatal(err)
		}
		list, count := pg.Rows, pg.Count
		var named map[string]bool // the addresses the read named (read the attributions of) before reading the transfers
		if pg.Attributed != nil {
			named = map[string]bool{}
			for k := range pg.Attributed.Asked {
				named[k.ChainType+":"+k.Address] = true
			}
		}
		// A page read from the pair rows that can hold it names its addresses first (a page
		// read short is read again hour by hour, from other pair rows).
		read := st.ShortFirstPages() == short
		if named == nil && read && len(list) > 0 {
			t.Errorf("flow %s, %s from %v: the page's addresses were not named before its transfers were read", flow, dir, at)
		}
		for _, r := range list {
			if ct := chainType(r.Chain); read && (!named[ct+":"+r.From] || !named[ct+":"+r.To]) {
				t.Fatalf("flow %s, %s from %v: transfer %s's addresses were not among those named", flow, dir, at, r.ID)
			}
		}
		if c := min(len(want), store.MaxCount); count != c {
			t.Errorf("flow %s, %s from %v: count %d, want %d", flow, dir, at, count, c)
		}
		if known && len(want) >= limit && st.ShortFirstPages() != short {
			t.Errorf("flow %s, %s from %v, %d rows: read short from the pair rows that can hold it", flow, dir, at, limit)
		}
		var got, exp []string
		for _, r := range list {
			got = append(got, r.ID)
		}
		for _, r := range want[:min(limit, len(want))] {
			exp = append(exp, r.ID)
		}
		if !slices.Equal(got, exp) {
			t.Fatalf("flow %s, %s from %v, %d rows: page\n got %v\nwant %v", flow, dir, at, limit, got, exp)
		}
	}
}

// A count found at the cap is remembered for its filter (the count up to a later time is the
// cap too) while nothing can lower it: a reorg that removes transfers and a relabel that takes
// an address out of the entity each void it, and the counts after them are exact.
func TestCappedCountsFollowRemovalsAndRelabels(t *testing.T) {
	ctx := context.Background()
	st, addr, now := entityXX(t, 0x2000)
	x1, x2 := addr(1), addr(2)
	// 10,100 transfers of the entity, one a minute; x2 sends the first 200 of them.
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	row := func(i int) store.TransferRow {
		h := fmt.Sprintf("0x%064x", 0x10000+i)
		from := x1
		if i < 200 {
			from = x2
		}
		return store.TransferRow{Chain: "ethereum", ID: h + "_0", TxHash: h, BlockHash: h, BlockNumber: int64(i + 1),
			BlockTime: start.Add(time.Duration(i) * time.Minute), From: from, To: addr(100 + i%50), TokenID: "ethereum",
			TokenSymbol: "ETH", TokenDecimals: 18, Amount: big.NewInt(1), UnitValue: 1}
	}
	write := func(from, to int) {
		var rows []store.TransferRow
		for i := from; i < to; i++ {
			rows = append(rows, row(i))
		}
		for i := 0; i < len(rows); i += 5000 {
			if _, err := st.WriteTransfers(ctx, rows[i:min(i+5000, len(rows))]); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(0, 10100)
	end := start.Add(10100 * time.Minute)
	count := func(at time.Time) int { t.Helper(); return countOfXX(t, st, at) }
	at := start.Add(10050*time.Minute + 30*time.Second) // 10,051 transfers up to it
	if n := count(at); n != store.MaxCount {
		t.Fatalf("count up to the 10,051st transfer: %d, want the cap", n)
	}
	hits := st.CappedCountHits()
	if n := count(end); n != store.MaxCount {
		t.Fatalf("count up to the end: %d, want the cap", n)
	}
	if st.CappedCountHits() != hits+1 {
		t.Fatal("a later count was read again, not answered as the cap it must be")
	}
	if n := count(at.Add(-time.Hour)); n != 9991 {
		t.Fatalf("count an hour earlier: %d, want 9991", n)
	}

	// A reorg removes 100 of the transfers before at: 9,951 are left up to it.
	var orphaned []store.Block
	for i := 1000; i < 1100; i++ {
		orphaned = append(orphaned, store.Block{Number: int64(i + 1), Hash: row(i).BlockHash})
	}
	if _, err := st.RemoveBlocks(ctx, "ethereum", orphaned, nil); err != nil {
		t.Fatal(err)
	}
	if n := count(at); n != 9951 {
		t.Fatalf("count after the reorg: %d, want 9951", n)
	}
	if n := count(end); n != 10000 {
		t.Fatalf("count to the end after the reorg: %d, want the cap (10,000 left)", n)
	}

	// At the cap again up to at; then x2 (200 transfers) leaves the entity.
	write(10100, 10150)
	if n := count(at); n != 9951 {
		t.Fatalf("count up to at after later writes: %d, want 9951", n)
	}
	if n := count(end.Add(time.Hour)); n != store.MaxCount {
		t.Fatalf("count up to the new end: %d, want the cap", n)
	}
	if err := st.ApplyAttributions(ctx, []store.Attribution{
		{ChainType: "evm", Address: x2, Entity: &store.Entity{ID: "yy", Name: "YY", Type: "cex"}, Version: 2, UpdatedAt: now},
	}, nil); err != nil {
		t.Fatal(err)
	}
	if n := count(end.Add(time.Hour)); n != 9850 {
		t.Fatalf("count after x2 left the entity: %d, want 9850", n)
	}
}

// entityXX is a fresh store in which every group is live and entity xx ("XX", a cex) holds
// addr(1) and addr(2), addresses numbered from base.
func entityXX(t *testing.T, base int) (st *store.Store, addr func(int) string, now time.Time) {
	t.Helper()
	pool := pgtest.Pool(t)
	return entityXXOn(t, pool, base)
}

// entityXXOn is entityXX on pool.
func entityXXOn(t *testing.T, pool *pgxpool.Pool, base int, edits ...func(*store.Options)) (st *store.Store, addr func(int) string, now time.Time) {
	t.Helper()
	reset(t, pool)
	st = newStore(pool, append([]func(*store.Options){withGroupMin(0)}, edits...)...)
	addr = func(n int) string { return fmt.Sprintf("0x%040x", base+n) }
	now = time.Now()
	ex := &store.Entity{ID: "xx", Name: "XX", Type: "cex"}
	if err := st.ApplyAttributions(context.Background(), []store.Attribution{
		{ChainType: "evm", Address: addr(1), Entity: ex, Version: 1, UpdatedAt: now},
		{ChainType: "evm", Address: addr(2), Entity: ex, Version: 1, UpdatedAt: now},
	}, nil); err != nil {
		t.Fatal(err)
	}
	return st, addr, now
}

// A client paging back by timeLte asks for ever earlier ends. The first count found at the cap
// also finds the day by whose end the entity first reached it, so every end after that day is
// answered from the cache, however early; ends before it are counted exactly.
func TestCappedCountsOfPagingBack(t *testing.T) {
	ctx := context.Background()
	st, addr, _ := entityXX(t, 0x3000)
	// 10,100 transfers of the entity, one a minute from 1 March: 10,080 by the end of the 7th.
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var rows []store.TransferRow
	for i := range 10100 {
		h := fmt.Sprintf("0x%064x", 0x30000+i)
		rows = append(rows, store.TransferRow{Chain: "ethereum", ID: h + "_0", TxHash: h, BlockHash: h, BlockNumber: int64(i + 1),
			BlockTime: start.Add(time.Duration(i) * time.Minute), From: addr(1), To: addr(100 + i%50), TokenID: "ethereum",
			TokenSymbol: "ETH", TokenDecimals: 18, Amount: big.NewInt(1), UnitValue: 1})
	}
	for i := 0; i < len(rows); i += 5000 {
		if _, err := st.WriteTransfers(ctx, rows[i:min(i+5000, len(rows))]); err != nil {
			t.Fatal(err)
		}
	}
	count := func(at time.Time) int { t.Helper(); return countOfXX(t, st, at) }
	if n := count(start.Add(10099 * time.Minute)); n != store.MaxCount {
		t.Fatalf("count up to the last transfer: %d, want the cap", n)
	}
	hits := st.CappedCountHits()
	for _, back := range []time.Duration{10090 * time.Minute, 10081 * time.Minute, 10080*time.Minute - time.Microsecond} {
		if n := count(start.Add(back)); n != store.MaxCount {
			t.Fatalf("count up to %s: %d, want the cap", start.Add(back), n)
		}
	}
	if got := st.CappedCountHits() - hits; got != 3 {
		t.Fatalf("%d of 3 ends after the day the cap was reached answered from the cache", got)
	}
	// Before the end of that day: read, and exact below the cap.
	if n := count(start.Add(9998*time.Minute + 30*time.Second)); n != 9999 {
		t.Fatalf("count up to the 9,999th transfer: %d, want 9999", n)
	}
	if n := count(start.Add(10079 * time.Minute)); n != store.MaxCount {
		t.Fatalf("count up to the 10,080th transfer: %d, want the cap", n)
	}
}

// countOfXX is the count of a page of entity xx's transfers (all flows) up to at.
func countOfXX(t *testing.T, st *store.Store, at time.Time) int {
	t.Helper()
	ctx := context.Background()
	base, _, err := st.SetSize(ctx, store.AddrSet{Entities: []string{"xx"}})
	if err != nil {
		t.Fatal(err)
	}
	_, n, err := listTransfers(ctx, st, store.TransferFilter{Flow: "all", Base: base, HasBase: true, TimeTo: at},
		store.Page{SortKey: "time", SortDir: "desc", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A keyset turn whose hours lie in one month reads that month's partition by name. A partition
// an operator detached stops being read once the store rereads the catalog, and one dropped
// while the store still lists it is read through the partitioned table instead.
func TestKeysetTurnsOfDetachedAndDroppedMonths(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	// st rereads the catalog at most hourly; rereads, on every read.
	st, addr, _ := entityXXOn(t, pool, 0x4000, func(o *store.Options) { o.PartitionRefresh = time.Hour })
	rereads := newStore(pool, withGroupMin(0), func(o *store.Options) { o.PartitionRefresh = 0 })
	reader := st
	var rows []store.TransferRow
	for i := range 400 {
		h := fmt.Sprintf("0x%064x", 0x40000+i)
		at := time.Date(2026, 4, 20, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 69 * time.Minute) // 20 April to 9 May
		rows = append(rows, store.TransferRow{Chain: "ethereum", ID: h + "_0", TxHash: h, BlockHash: h, BlockNumber: int64(i + 1),
			BlockTime: at, From: addr(1 + i%2), To: addr(100 + i%7), TokenID: "ethereum", TokenSymbol: "ETH", TokenDecimals: 18,
			Amount: big.NewInt(1), UnitValue: 1})
	}
	if _, err := st.WriteTransfers(ctx, rows); err != nil {
		t.Fatal(err)
	}
	base, _, err := st.SetSize(ctx, store.AddrSet{Entities: []string{"xx"}})
	if err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 5, 8, 0, 0, 0, 0, time.UTC)
	var valueGte *float64 // set: the read's plan made with its values (no generic plan)
	page := func() []store.TransferRow {
		t.Helper()
		list, _, err := listTransfers(ctx, reader, store.TransferFilter{Flow: "all", Base: base, HasBase: true, TimeTo: end, ValueGte: valueGte},
			store.Page{SortKey: "time", SortDir: "desc", Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	want := func(upTo time.Time) []time.Time {
		var ts []time.Time
		for i := len(rows) - 1; i >= 0 && len(ts) < 20; i-- {
			if at := rows[i].BlockTime; !at.After(upTo) {
				ts = append(ts, at)
			}
		}
		return ts
	}
	check := func(what string, upTo time.Time) {
		t.Helper()
		got := page()
		var ts []time.Time
		for _, r := range got {
			ts = append(ts, r.BlockTime)
		}
		if w := want(upTo); !slices.EqualFunc(ts, w, time.Time.Equal) {
			t.Fatalf("%s: page times %v, want %v", what, ts, w)
		}
	}
	check("May, attached", end) // the May partition by name
	if _, err := pool.Exec(ctx, `ALTER TABLE transfers.transfers DETACH PARTITION transfers.transfers_202605`); err != nil {
		t.Fatal(err)
	}
	// The store still lists May for an hour: it reads the detached table (the documented bound).
	check("May, detached, not yet reread", end)
	reader = rereads
	// Reread: May is not read. (Its pair rows remain, so the page is read hour by hour from the
	// partitioned table, which has April's rows only.)
	check("May, detached", time.Date(2026, 4, 30, 23, 59, 59, 0, time.UTC))
	reader = st
	if _, err := pool.Exec(ctx, `ALTER TABLE transfers.transfers ATTACH PARTITION transfers.transfers_202605
		FOR VALUES FROM ('2026-05-01 00:00:00+00') TO ('2026-06-01 00:00:00+00')`); err != nil {
		t.Fatal(err)
	}
	reader = rereads
	check("May, attached again", end)
	zero := 0.0
	valueGte = &zero
	check("May, attached again, with a value range", end)
	reader = st // it still lists May
	if _, err := pool.Exec(ctx, `DROP TABLE transfers.transfers_202605`); err != nil {
		t.Fatal(err)
	}
	check("May, dropped while listed, with a value range", time.Date(2026, 4, 30, 23, 59, 59, 0, time.UTC))
	valueGte = nil
	check("May, dropped while listed", time.Date(2026, 4, 30, 23, 59, 59, 0, time.UTC))
}

// A pair row's uid goes with any change of its count, whoever writes it: a replica of an
// earlier version adds and subtracts transfers with an upsert that knows nothing of the column
// (a rolling upgrade past migration 22). Other updates of the row keep it.
func TestEntityPairUIDsClearedByAnyWriter(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st, addr, _ := entityXXOn(t, pool, 0x4000)
	at := time.Date(2026, 2, 3, 10, 0, 0, 0, time.UTC)
	var rows []store.TransferRow
	for i := 0; i < 3; i++ {
		h := fmt.Sprintf("0x%064x", 0x4000+i)
		rows = append(rows, store.TransferRow{Chain: "ethereum", ID: h + "_0", TxHash: h, BlockHash: h, BlockNumber: int64(i + 1),
			BlockTime: at.Add(time.Duration(i) * 10 * time.Hour), From: addr(1), To: addr(10 + i), TokenID: "ethereum",
			TokenSymbol: "ETH", TokenDecimals: 18, Amount: big.NewInt(1), UnitValue: 1})
	}
	if _, err := st.WriteTransfers(ctx, rows); err != nil {
		t.Fatal(err)
	}
	if n := entityPairUIDsHold(t, pool); n != 3 {
		t.Fatalf("%d pair rows with a uid, want 3", n)
	}
	// As an earlier version's apply and reorg write: n changes, uid is not named.
	for _, sql := range []string{
		`UPDATE transfers.entity_pair_rows SET n = n + 1, usd = usd WHERE to_addr = '` + addr(10) + `'`,
		`UPDATE transfers.entity_pair_rows SET n = n - 1 WHERE to_addr = '` + addr(11) + `'`,
		`UPDATE transfers.entity_pair_rows SET from_t = from_t, to_t = to_t WHERE to_addr = '` + addr(12) + `'`,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	var kept []string
	if err := pool.QueryRow(ctx, `SELECT coalesce(array_agg(to_addr ORDER BY to_addr), '{}') FROM transfers.entity_pair_rows WHERE uid IS NOT NULL`).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kept, []string{addr(12)}) {
		t.Fatalf("pair rows keeping a uid: %v, want only %s's (its count did not change)", kept, addr(12))
	}
}

// chainType is the type of the chain named chain, as attributions are keyed.
func chainType(chain string) string {
	c, _ := chains.Lookup(chain)
	return string(c.Type)
}
