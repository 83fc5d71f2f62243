package http

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/jackc/pgx/v5"
)

// BenchmarkSearch100k is GET /internal/search for a caller with 100,000 labels (the default cap)
// in a table also holding 100,000 labels of 200 other users, for these kinds of query: "rare"
// (a name substring one label holds), "common" (the first word of an eighth of the caller's
// label names), "substring" (the second word of an eighth of them, which no name starts with),
// "address" (an address prefix), "short" (two characters, matching many), "short-none" (two
// characters matching none: no trigram to look up, nothing to stop early) and "short-address"
// ("0x", every address's prefix). With SEARCH_EXPLAIN=1 it also prints EXPLAIN (ANALYZE,
// BUFFERS) of the label query of each, as it runs, as it ran with names searched for substrings
// whatever the query's length (app.MinSubstringQueryRunes; it differs for the short queries
// only), and as it ran before the trigram index and the bound (the statement below, the index
// dropped in a transaction that is rolled back), then a table of the three side by side:
//
//	SEARCH_EXPLAIN=1 go test -run '^$' -bench Search100k -benchtime 100x ./internal/http/
func BenchmarkSearch100k(b *testing.B) {
	ev, srv := benchServer(b)
	big := newUser()
	ctx := context.Background()
	pool := ev.store.Pool()
	if _, err := pool.Exec(ctx, seedSearchSQL, big); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE userdata.labels`); err != nil {
		b.Fatal(err)
	}
	queries := []struct{ name, q string }{
		{"rare", rareSearchName(b, pool, big)}, {"common", "desk"}, {"substring", "wallet"}, {"address", "0x00ab"}, {"short", "de"}, {"short-none", "zq"},
		{"short-address", "0x"},
	}
	if os.Getenv("SEARCH_EXPLAIN") != "" {
		var sums []string
		for _, q := range queries {
			sums = append(sums, explainSearch(b, pool, big, q.name, q.q))
		}
		fmt.Printf("== label statement: execution time, shared buffers hit\n%-28s | %-22s | %-22s | %-22s\n%s\n", "query",
			"before trigram index", "substrings at any length", "now", strings.Join(sums, "\n"))
	}
	hc := &http.Client{Transport: httpx.NewTransport()}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			get := func() {
				req, _ := http.NewRequest("GET", srv.URL+"/internal/search?query="+url.QueryEscape(q.q), nil)
				ev.signer.Sign(req.Header, identity(big), time.Now())
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			for range 5 {
				get()
			}
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				get()
				ds = append(ds, time.Since(t0))
			}
			reportLatency(b, ds)
		})
	}
}

// seedSearchSQL gives user $1 100,000 labels named "<word> <10 hex digits>" (eight words in
// turn) and 200 other users 500 labels each.
const seedSearchSQL = `
INSERT INTO userdata.labels (user_id, chain_type, address, name, note)
SELECT $1::text, 'evm', '0x' || md5(i::text) || lpad(to_hex(i), 8, '0'),
       (ARRAY['hot wallet','cold storage','deposit','exchange','desk','treasury','payroll','vault'])[1 + i % 8]
           || ' ' || substr(md5('n' || i), 1, 10), 'note ' || i
FROM generate_series(1, 100000) i
UNION ALL
SELECT 'other-' || $1 || '-' || (i % 200), 'evm', '0x' || md5('s' || i) || lpad(to_hex(i), 8, '0'),
       (ARRAY['hot wallet','cold storage','deposit','exchange','desk','treasury','payroll','vault'])[1 + i % 8]
           || ' ' || substr(md5('m' || i), 1, 10), ''
FROM generate_series(1, 100000) i`

// rareSearchName is a 6-character substring of one of user's label names.
func rareSearchName(b *testing.B, pool interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, user string) string {
	var name string
	if err := pool.QueryRow(context.Background(), `SELECT name FROM userdata.labels WHERE user_id = $1 ORDER BY address LIMIT 1`, user).Scan(&name); err != nil {
		b.Fatal(err)
	}
	return name[len(name)-7 : len(name)-1]
}

// searchLabelsBeforeSQL is search_labels.sql as it was before the trigram index and the bound:
// every match of the user's labels ranked.
const searchLabelsBeforeSQL = `
SELECT name, note, address, chain_type
FROM userdata.labels
WHERE user_id = $1
  AND (lower(name) LIKE '%' || $3 || '%' ESCAPE '\' OR lower(address) LIKE $3 || '%' ESCAPE '\')
ORDER BY CASE WHEN lower(name) = $2 OR lower(address) = $2 THEN 0
              WHEN lower(name) LIKE $3 || '%' ESCAPE '\' OR lower(address) LIKE $3 || '%' ESCAPE '\' THEN 1
              ELSE 2 END,
         lower(name), chain_type, address
LIMIT $4 OFFSET $5`

// explainSearch prints the plans of the label query for q as it runs, as it ran with substrings
// whatever q's length, and as it ran before, and returns a line of the three side by side.
func explainSearch(b *testing.B, pool interface {
	Begin(context.Context) (pgx.Tx, error)
}, user, name, q string) string {
	ctx := context.Background()
	cur, err := os.ReadFile("../store/sql/search_labels.sql")
	if err != nil {
		b.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	show := func(what, sql string, args ...any) string {
		rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) "+sql, args...)
		if err != nil {
			b.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("== %s %q, %s\n%s\n", name, q, what, strings.Join(lines, "\n"))
		return planSummary(lines)
	}
	substrings := app.SubstringSearchable(q)
	now := show("now", string(cur), user, q, q, 10, 0, 1000, substrings)
	always := show("names searched for substrings at any query length", string(cur), user, q, q, 10, 0, 1000, true)
	if _, err := tx.Exec(ctx, `DROP INDEX userdata.labels_search_idx`); err != nil {
		b.Fatal(err)
	}
	before := show("before (no trigram index, every match ranked)", searchLabelsBeforeSQL, user, q, q, 10, 0)
	return fmt.Sprintf("%-28s | %-22s | %-22s | %-22s", fmt.Sprintf("%s %q", name, q), before, always, now)
}

// planSummary is the execution time and the shared buffers hit of an EXPLAIN (ANALYZE, BUFFERS).
func planSummary(lines []string) string {
	var exec, bufs string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "Execution Time: "); ok {
			exec = v
		}
		if v, ok := strings.CutPrefix(l, "Buffers: shared hit="); ok && bufs == "" {
			bufs, _, _ = strings.Cut(v, " ")
		}
	}
	return exec + ", " + bufs
}
