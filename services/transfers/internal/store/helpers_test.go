package store_test

import (
	"context"
	"fmt"

	"github.com/chainintel/chainintel/services/transfers/internal/store"
	"github.com/jackc/pgx/v5/pgxpool"
)

func fmtAny(v any) string { return fmt.Sprint(v) }

// newStore is a store over pool with the options the tests run with, the service's defaults but
// for rollups applied inline (a read after a write sees it in every rollup), then edits.
func newStore(pool *pgxpool.Pool, edits ...func(*store.Options)) *store.Store {
	o := store.DefaultOptions()
	o.InlineRollups = true
	for _, e := range edits {
		e(&o)
	}
	return store.New(pool, o)
}

// withGroupMin sets Options.GroupMin.
func withGroupMin(n int) func(*store.Options) { return func(o *store.Options) { o.GroupMin = n } }

// listTransfers is a page of transfers matching f and its capped count, as the app reads them
// (PageTransfers) without attributions beside the page.
func listTransfers(ctx context.Context, st *store.Store, f store.TransferFilter, p store.Page) ([]store.TransferRow, int, error) {
	pg, err := st.PageTransfers(ctx, f, p)
	return pg.Rows, pg.Count, err
}
