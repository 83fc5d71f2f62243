package http

import (
	"context"
	"fmt"
	"os"
	"regexp"
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

func status(t *testing.T, r resp, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d; body %s", r.Status, want, r.Body)
	}
}

// A search reads a bounded share of a big label set: the trigram index finds the labels a
// selective query matches without reading the others, and a query matching many labels ranks
// the first 1,000 found (offset + limit when more), not all of them. Checked on the label
// statement's plan (EXPLAIN ANALYZE) for a user with 3,000 matching labels.
func TestSearchReadsABoundedShareOfALabelSet(t *testing.T) {
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
	plan := func(setup, q string, limit, offset int) string {
		tx, err := ev.store.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		if _, err := tx.Exec(ctx, "ANALYZE userdata.labels; "+setup); err != nil {
			t.Fatal(err)
		}
		rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF) "+string(sql), pgx.QueryExecModeExec, u, q, q, limit, offset, 1000)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	// read is how many label rows the plan's scan of userdata.labels returned.
	scanned := regexp.MustCompile(`Scan on labels .*rows=(\d+) loops=(\d+)`)
	read := func(p string) int {
		m := scanned.FindStringSubmatch(p)
		if m == nil {
			t.Fatalf("no scan of labels in\n%s", p)
		}
		rows, _ := strconv.Atoi(m[1])
		loops, _ := strconv.Atoi(m[2])
		return rows * loops
	}
	if p := plan("SET LOCAL max_parallel_workers_per_gather = 0", "desk", 10, 0); read(p) != 1000 {
		t.Fatalf("a query matching 3,000 labels read %d of them, want 1,000:\n%s", read(p), p)
	}
	if p := plan("SET LOCAL max_parallel_workers_per_gather = 0", "desk", 100, 1500); read(p) != 1600 {
		t.Fatalf("offset 1,500 limit 100 read %d labels, want 1,600:\n%s", read(p), p)
	}
	// On this small table the planner prefers the primary key's range of the user's labels; with
	// that out of the way (in the rolled-back transaction) the trigram index serves the query
	// rather than a scan of the table.
	if p := plan("ALTER TABLE userdata.labels DROP CONSTRAINT labels_pkey; SET LOCAL enable_seqscan = off", "desk 1234", 10, 0); !strings.Contains(p, "labels_search_idx") {
		t.Fatalf("a selective query does not use the trigram index:\n%s", p)
	}
}
