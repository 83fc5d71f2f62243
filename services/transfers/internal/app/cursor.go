package app

import (
	"cmp"
	"context"
	"math"
	"time"

	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// maxCursorRead is the most rows one cursor page reads: its page plus the rows before it that
// share the cursor's key. More rows than that on one key (one block time, one value) cannot be
// paged past by key.
const maxCursorRead = query.MaxWindow

// cursorKey is a row's sort key as a cursor keeps it.
func cursorKey(sortKey string, r store.TransferRow) int64 {
	if sortKey == "value" {
		return int64(math.Float64bits(r.UnitValue))
	}
	return r.BlockTime.UnixMicro()
}

func cmpKey(sortKey string, a, b int64) int {
	if sortKey == "value" {
		return cmp.Compare(math.Float64frombits(uint64(a)), math.Float64frombits(uint64(b)))
	}
	return cmp.Compare(a, b)
}

// ahead reports whether r comes strictly after the cursor in its order (key, chain, id; the
// store's order, in which chain and id compare bytewise, the C collation).
func ahead(c *query.Cursor, r store.TransferRow) bool {
	d := cmp.Or(cmpKey(c.SortKey, cursorKey(c.SortKey, r), c.Key), cmp.Compare(r.Chain, c.Chain), cmp.Compare(r.ID, c.ID))
	if c.SortDir == "asc" {
		return d > 0
	}
	return d < 0
}

// fromCursor narrows f to the rows at or after the cursor's key: the store's inclusive bounds on
// time or value, so every read plan (keyset turns of entities included) serves a cursor page.
func fromCursor(f store.TransferFilter, c *query.Cursor) store.TransferFilter {
	switch {
	case c.SortKey == "time":
		t := time.UnixMicro(c.Key).UTC()
		if c.SortDir == "desc" && (f.TimeTo.IsZero() || t.Before(f.TimeTo)) {
			f.TimeTo = t
		}
		if c.SortDir == "asc" && (f.TimeFrom.IsZero() || t.After(f.TimeFrom)) {
			f.TimeFrom = t
		}
	case c.SortDir == "desc":
		v := math.Float64frombits(uint64(c.Key))
		if f.ValueLte == nil || v < *f.ValueLte {
			f.ValueLte = &v
		}
	default:
		v := math.Float64frombits(uint64(c.Key))
		if f.ValueGte == nil || v > *f.ValueGte {
			f.ValueGte = &v
		}
	}
	return f
}

// cursorPage reads the page after q.Cursor: the rows from its key on, of which those at or
// before its place are dropped. The read asks for the page plus the cursor's ties; when more
// rows share the key than the cursor counted (rows written since at that very key), it reads
// again with more. The page's Rows are the page and its Count the matches from the cursor on;
// its Attributed is the first read's that had any (Page.Attributions). read is every row the
// last read returned (for the next cursor's ties).
//
// A cursor whose page counted fewer than the cap carries the matches after it (Cursor.Ahead):
// that is this page's count, and the page is read without one. Read, a count below the cap is
// not remembered (the store's capCache keeps counts at the cap), so a client paging towards an
// entity's first transfers read it on every turn, and the turn waited for it.
func (a *App) cursorPage(ctx context.Context, f store.TransferFilter, q query.Transfers, p store.Page) (pg store.TransferPage, read []store.TransferRow, err error) {
	c := q.Cursor
	f = fromCursor(f, c)
	p.NoCount = c.Ahead >= 0
	// The read's LIMIT is part of its statement text, and each text is planned once per
	// connection (generic plans, store.go): the ties are padded to a power of two, so a run of
	// turns reuses a few texts rather than planning one for every tie count.
	pad := 4
	for pad < c.Ties {
		pad *= 2
	}
	want := min(pad+q.Limit, maxCursorRead)
	var page []store.TransferRow
	var attributed *store.Attributed
	for {
		p.Limit, p.Offset = want, 0
		p.Attributions = p.Attributions && attributed == nil
		got, err := a.store.PageTransfers(ctx, f, p)
		if err != nil {
			return store.TransferPage{}, nil, err
		}
		if attributed == nil {
			attributed = got.Attributed
		}
		rows, n := got.Rows, got.Count
		page = page[:0]
		for _, r := range rows {
			if ahead(c, r) {
				page = append(page, r)
			}
		}
		if len(page) >= q.Limit || len(rows) < want {
			skipped := len(rows) - len(page)
			switch {
			case p.NoCount:
				n = max(c.Ahead, len(page))
			case n < store.MaxCount:
				n = max(n-skipped, len(page))
			}
			return store.TransferPage{Rows: page[:min(len(page), q.Limit)], Count: n, Attributed: attributed}, rows, nil
		}
		if want >= maxCursorRead {
			return store.TransferPage{}, nil, params.Errorf("cursor", "more than %d transfers share this page's %s; narrow the query (timeGte/timeLte, chains)", maxCursorRead, c.SortKey)
		}
		want = min(want*4, maxCursorRead)
	}
}

// nextCursor is the cursor after the last row of page; read is every row of the read the page
// came from, in order, so the ties of the last row's key are counted across pages. count is the
// page's count: below the cap, the matches after the page are count less the page and the rows
// before it (its offset), which the cursor carries.
func nextCursor(q query.Transfers, page, read []store.TransferRow, count int) string {
	if len(page) < q.Limit || len(page) == 0 {
		return "" // the end
	}
	last := page[len(page)-1]
	key := cursorKey(q.SortKey, last)
	ties := 0
	for _, r := range read {
		if cmpKey(q.SortKey, cursorKey(q.SortKey, r), key) == 0 {
			ties++
		}
		if r.Chain == last.Chain && r.ID == last.ID {
			break
		}
	}
	ahead := -1
	if count < store.MaxCount {
		ahead = max(count-q.Offset-len(page), 0)
	}
	return query.Cursor{SortKey: q.SortKey, SortDir: q.SortDir, Key: key, Chain: last.Chain, ID: last.ID,
		Ties: max(ties, 1), Filter: q.Filter, Ahead: ahead}.Encode()
}
