package http

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chainintel/chainintel/services/user-labels/internal/app"
)

// TestInternalSearch: the caller's labels and entities matching a query, ranked exact, prefix,
// substring; never another user's; bad limits named.
func TestInternalSearch(t *testing.T) {
	ev := newEnv(t)
	alice, bob := newUser(), newUser()
	status(t, ev.do(t, alice, "POST", "/user/labels", `[
		{"name":"my cold desk","note":"","address":"`+evmAddr(1)+`","chainType":"evm"},
		{"name":"desk","note":"n","address":"`+evmAddr(2)+`","chainType":"evm"},
		{"name":"desktop wallet","note":"","address":"`+evmAddr(3)+`","chainType":"evm"},
		{"name":"other","note":"","address":"`+evmAddr(4)+`","chainType":"evm"}]`), 200)
	status(t, ev.do(t, bob, "POST", "/user/labels", `[{"name":"desk","note":"bob","address":"`+evmAddr(5)+`","chainType":"evm"}]`), 200)
	ents := decode[[]app.Entity](t, ev.do(t, alice, "POST", "/user/entities",
		`[{"name":"Desk Fund","addresses":{"evm":["`+evmAddr(7)+`"]}},{"name":"unrelated","addresses":{"evm":["`+evmAddr(0xabcd)+`"]}}]`))

	want := `{"entities":[` + entityJSON(ents[0], "Desk Fund", "", false, `{"evm":["`+evmAddr(7)+`"]}`) + `],"labels":[
		{"name":"desk","note":"n","address":"` + evmAddr(2) + `","chainType":"evm"},
		{"name":"desktop wallet","note":"","address":"` + evmAddr(3) + `","chainType":"evm"},
		{"name":"my cold desk","note":"","address":"` + evmAddr(1) + `","chainType":"evm"}]}`
	expect(t, ev.do(t, alice, "GET", "/internal/search?query=DESK", nil), 200, want)
	expect(t, ev.do(t, alice, "GET", "/internal/search?query=desk&limit=1&offset=1", nil), 200,
		`{"entities":[],"labels":[{"name":"desktop wallet","note":"","address":"`+evmAddr(3)+`","chainType":"evm"}]}`)
	// An address prefix finds the entity holding it and the label of it.
	expect(t, ev.do(t, alice, "GET", "/internal/search?query="+evmAddr(0xabcd)[:40], nil), 200,
		`{"entities":[`+entityJSON(ents[1], "unrelated", "", false, `{"evm":["`+evmAddr(0xabcd)+`"]}`)+`],"labels":[]}`)
	// Wildcards are literal.
	expect(t, ev.do(t, alice, "GET", "/internal/search?query=%25", nil), 200, `{"entities":[],"labels":[]}`)
	expect(t, ev.do(t, bob, "GET", "/internal/search?query=desk", nil), 200,
		`{"entities":[],"labels":[{"name":"desk","note":"bob","address":"`+evmAddr(5)+`","chainType":"evm"}]}`)

	expectError(t, ev.do(t, alice, "GET", "/internal/search?query=", nil), 400, "query: must be 1 to 200 characters (got 0)")
	expectError(t, ev.do(t, alice, "GET", "/internal/search?query=a&limit=101", nil), 400, "limit: must be between 0 and 100, got 101")
	status(t, ev.do(t, "", "GET", "/internal/search?query=a", nil), 401)
}

// TestSearchShortQueryMatchesPrefixes: a query of one or two characters matches names and
// addresses starting with it, not names containing it; three characters match inside names too.
func TestSearchShortQueryMatchesPrefixes(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	status(t, ev.do(t, u, "POST", "/user/labels", `[
		{"name":"de","note":"","address":"`+evmAddr(1)+`","chainType":"evm"},
		{"name":"Desk","note":"","address":"`+evmAddr(2)+`","chainType":"evm"},
		{"name":"my desk","note":"","address":"`+evmAddr(3)+`","chainType":"evm"}]`), 200)
	ents := decode[[]app.Entity](t, ev.do(t, u, "POST", "/user/entities",
		`[{"name":"Desk Fund","addresses":{"evm":["`+evmAddr(7)+`"]}},{"name":"my desk fund","addresses":{"evm":["`+evmAddr(8)+`"]}}]`))
	label := func(name string, n int) string {
		return fmt.Sprintf(`{"name":%q,"note":"","address":%q,"chainType":"evm"}`, name, evmAddr(n))
	}
	deskFund := entityJSON(ents[0], "Desk Fund", "", false, `{"evm":["`+evmAddr(7)+`"]}`)
	myDeskFund := entityJSON(ents[1], "my desk fund", "", false, `{"evm":["`+evmAddr(8)+`"]}`)
	expect(t, ev.do(t, u, "GET", "/internal/search?query=DE", nil), 200,
		`{"entities":[`+deskFund+`],"labels":[`+label("de", 1)+","+label("Desk", 2)+`]}`)
	expect(t, ev.do(t, u, "GET", "/internal/search?query=m", nil), 200,
		`{"entities":[`+myDeskFund+`],"labels":[`+label("my desk", 3)+`]}`)
	expect(t, ev.do(t, u, "GET", "/internal/search?query=es", nil), 200, `{"entities":[],"labels":[]}`)
	expect(t, ev.do(t, u, "GET", "/internal/search?query=esk", nil), 200,
		`{"entities":[`+deskFund+","+myDeskFund+`],"labels":[`+label("Desk", 2)+","+label("my desk", 3)+`]}`)
	// Address prefixes count at any length: every label's address starts with "0x".
	expect(t, ev.do(t, u, "GET", "/internal/search?query=0x&limit=2", nil), 200,
		`{"entities":[`+deskFund+","+myDeskFund+`],"labels":[`+label("de", 1)+","+label("Desk", 2)+`]}`)
}

// A query of punctuation alone has no trigram either, so it matches prefixes only, like a short
// one; a letter whose lower case differs between Go and the database (İ) is found, both sides being
// lower-cased by the database.
func TestSearchPunctuationAndCaseFolding(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	status(t, ev.do(t, u, "POST", "/user/labels", `[
		{"name":"---desk","note":"","address":"`+evmAddr(1)+`","chainType":"evm"},
		{"name":"old---desk","note":"","address":"`+evmAddr(2)+`","chainType":"evm"},
		{"name":"İstanbul desk","note":"","address":"`+evmAddr(3)+`","chainType":"evm"}]`), 200)
	label := func(name string, n int) string {
		return fmt.Sprintf(`{"name":%q,"note":"","address":%q,"chainType":"evm"}`, name, evmAddr(n))
	}
	expect(t, ev.do(t, u, "GET", "/internal/search?query=---", nil), 200,
		`{"entities":[],"labels":[`+label("---desk", 1)+`]}`)
	expect(t, ev.do(t, u, "GET", "/internal/search?query=-desk", nil), 200,
		`{"entities":[],"labels":[`+label("---desk", 1)+","+label("old---desk", 2)+`]}`)
	expect(t, ev.do(t, u, "GET", "/internal/search?query="+url.QueryEscape("İstan"), nil), 200,
		`{"entities":[],"labels":[`+label("İstanbul desk", 3)+`]}`)
}

// A short query that matches nothing examines none of the user's labels (b-tree ranges only);
// with names searched for substrings it examined all of them.
func TestSearchShortQueryReadsNoLabels(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	items := make([]string, 3000)
	for i := range items {
		items[i] = fmt.Sprintf(`{"name":"desk %d","note":"","address":%q,"chainType":"evm"}`, i, evmAddr(i))
	}
	status(t, ev.do(t, u, "POST", "/user/labels", "["+strings.Join(items, ",")+"]"), 200)
	sql, err := os.ReadFile("../store/sql/search_labels.sql")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ev.store.Pool().Exec(ctx, "ANALYZE userdata.labels"); err != nil {
		t.Fatal(err)
	}
	// Rows a scan of labels returned or removed by its filter.
	examinedRe := regexp.MustCompile(`(?m)Scan (?:using \S+ )?on labels .*rows=(\d+) loops=(\d+)\)(?:\n\s*(?:Index Cond|Recheck Cond|Filter):.*)*(?:\n\s*Rows Removed by Filter: (\d+))?`)
	examined := func(substrings bool) (int, string) {
		tx, err := ev.store.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if _, err := tx.Exec(ctx, "SET LOCAL max_parallel_workers_per_gather = 0"); err != nil {
			t.Fatal(err)
		}
		rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF) "+string(sql), pgx.QueryExecModeExec, u, "zq", "zq", 10, 0, 1000, substrings)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		n := 0
		for _, m := range examinedRe.FindAllStringSubmatch(plan, -1) {
			r, _ := strconv.Atoi(m[1])
			loops, _ := strconv.Atoi(m[2])
			removed, _ := strconv.Atoi(m[3])
			n += (r + removed) * loops
		}
		return n, plan
	}
	if n, p := examined(true); n < 3000 {
		t.Fatalf("with substrings, %d labels examined, want all 3,000 (the test no longer tells):\n%s", n, p)
	}
	if n, p := examined(false); n != 0 {
		t.Fatalf("prefixes only: %d labels examined, want none:\n%s", n, p)
	}
}

func status(t *testing.T, r resp, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d; body %s", r.Status, want, r.Body)
	}
}

// The bound keeps the best of the ranking, not the first matches stored: the exact match, saved
// after 3,000 labels containing the query, comes first, and the pages of the 1,000 answered
// labels neither overlap nor skip one; an offset at or past 1,000 answers none. Entities likewise
// (1,100 entities containing the query, then the exact one).
func TestSearchBoundKeepsTheBestMatches(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	items := make([]string, 3000)
	names := make([]string, len(items))
	for i := range items {
		names[i] = fmt.Sprintf("my desk %d", i)
		items[i] = fmt.Sprintf(`{"name":%q,"note":"","address":%q,"chainType":"evm"}`, names[i], evmAddr(i))
	}
	status(t, ev.do(t, u, "POST", "/user/labels", "["+strings.Join(items, ",")+"]"), 200)
	status(t, ev.do(t, u, "POST", "/user/labels", `[{"name":"desk","note":"","address":"`+evmAddr(5000)+`","chainType":"evm"}]`), 200)

	byName := map[string]string{"desk": evmAddr(5000)}
	for i, n := range names {
		byName[n] = evmAddr(i)
	}
	sort.Strings(names)
	ranked := append([]string{"desk"}, names[:999]...)
	page := func(from, to int) string {
		var b strings.Builder
		for i, n := range ranked[from:to] {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"name":%q,"note":"","address":%q,"chainType":"evm"}`, n, byName[n])
		}
		return `{"entities":[],"labels":[` + b.String() + `]}`
	}
	expect(t, ev.do(t, u, "GET", "/internal/search?query=desk&limit=3", nil), 200, page(0, 3))
	for off := 0; off < 1000; off += 100 {
		expect(t, ev.do(t, u, "GET", fmt.Sprintf("/internal/search?query=desk&limit=100&offset=%d", off), nil), 200, page(off, off+100))
	}
	expect(t, ev.do(t, u, "GET", "/internal/search?query=desk&limit=100&offset=950", nil), 200, page(950, 1000))
	for _, off := range []int{1000, 1100, 10000} {
		expect(t, ev.do(t, u, "GET", fmt.Sprintf("/internal/search?query=desk&limit=100&offset=%d", off), nil), 200, `{"entities":[],"labels":[]}`)
	}

	ents := make([]string, 1100)
	for i := range ents {
		ents[i] = fmt.Sprintf(`{"name":"my fund %d","addresses":{"evm":[%q]}}`, i, evmAddr(10000+i))
	}
	byEntity := map[string]app.Entity{}
	for _, batch := range [][]string{ents[:1000], ents[1000:]} {
		for _, e := range decode[[]app.Entity](t, ev.do(t, u, "POST", "/user/entities", "["+strings.Join(batch, ",")+"]")) {
			byEntity[e.Name] = e
		}
	}
	fund := decode[[]app.Entity](t, ev.do(t, u, "POST", "/user/entities", `[{"name":"Fund","addresses":{"evm":["`+evmAddr(20000)+`"]}}]`))[0]
	entity := func(name string) string {
		e := byEntity[name]
		var n int
		_, _ = fmt.Sscanf(name, "my fund %d", &n)
		return entityJSON(e, name, "", false, fmt.Sprintf(`{"evm":[%q]}`, evmAddr(10000+n)))
	}
	expect(t, ev.do(t, u, "GET", "/internal/search?query=fund&limit=3", nil), 200, `{"entities":[`+
		entityJSON(fund, "Fund", "", false, `{"evm":["`+evmAddr(20000)+`"]}`)+","+entity("my fund 0")+","+entity("my fund 1")+`],"labels":[]}`)
	fundNames := make([]string, 0, len(byEntity))
	for n := range byEntity {
		fundNames = append(fundNames, n)
	}
	sort.Strings(fundNames)
	// The 1,000th and last entity answered is the 999th "my fund" name in byte order.
	expect(t, ev.do(t, u, "GET", "/internal/search?query=fund&limit=2&offset=999", nil), 200, `{"entities":[`+
		entity(fundNames[998])+`],"labels":[]}`)
}

// A search reads the same labels whatever the offset: the bound is on the ranking, not widened
// to offset + limit. Checked on the label statement's plan (EXPLAIN ANALYZE) for a user with
// 3,000 matching labels: the rows the scans of labels hand on. (How few a big label set reads is
// BenchmarkSearch100k's EXPLAIN; on a table this small the planner may as well sort every match.)
func TestSearchReadsTheSameLabelsAtEveryOffset(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	items := make([]string, 3000)
	for i := range items {
		items[i] = fmt.Sprintf(`{"name":"desk %d","note":"","address":%q,"chainType":"evm"}`, i, evmAddr(i))
	}
	status(t, ev.do(t, u, "POST", "/user/labels", "["+strings.Join(items, ",")+"]"), 200)
	sql, err := os.ReadFile("../store/sql/search_labels.sql")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ev.store.Pool().Exec(ctx, "ANALYZE userdata.labels"); err != nil {
		t.Fatal(err)
	}
	plan := func(setup, q string, limit, offset int) string {
		tx, err := ev.store.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if _, err := tx.Exec(ctx, setup); err != nil {
			t.Fatal(err)
		}
		rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF) "+string(sql), pgx.QueryExecModeExec, u, q, q, limit, offset, 1000, true)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	scanned := regexp.MustCompile(`Scan (?:using \S+ )?on labels .*rows=(\d+) loops=(\d+)`)
	read := func(p string) int {
		n := 0
		for _, m := range scanned.FindAllStringSubmatch(p, -1) {
			rows, _ := strconv.Atoi(m[1])
			loops, _ := strconv.Atoi(m[2])
			n += rows * loops
		}
		return n
	}
	const setup = "SET LOCAL max_parallel_workers_per_gather = 0"
	first := plan(setup, "desk", 10, 0)
	if p := plan(setup, "desk", 100, 1500); read(p) != read(first) {
		t.Fatalf("offset 1,500 limit 100 read %d labels, offset 0 %d:\n%s", read(p), read(first), p)
	}
	// With the b-tree indexes of the user's labels out of the way (in the rolled-back
	// transaction) the trigram index serves a selective query rather than a scan of the table.
	if p := plan("ALTER TABLE userdata.labels DROP CONSTRAINT labels_pkey; DROP INDEX userdata.labels_name_order_idx; DROP INDEX userdata.labels_address_prefix_idx; SET LOCAL enable_seqscan = off; "+setup, "desk 1234", 10, 0); !strings.Contains(p, "labels_search_idx") {
		t.Fatalf("a selective query does not use the trigram index:\n%s", p)
	}
}
