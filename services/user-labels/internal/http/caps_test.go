package http

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chainintel/chainintel/services/user-labels/internal/app"
)

// labelsJSON renders labels named name<i> of evmAddr(i) for each i.
func labelsJSON(name string, is ...int) string {
	items := make([]string, len(is))
	for k, i := range is {
		items[k] = fmt.Sprintf(`{"name":"%s%d","note":"","address":%q,"chainType":"evm"}`, name, i, evmAddr(i))
	}
	return "[" + strings.Join(items, ",") + "]"
}

// A user stores at most the configured number of labels: a write that would pass the cap is a
// 400 naming it and stores nothing (not even its updates); updates of stored labels do not
// count; deleting makes room; another user has their own cap.
func TestLabelCapPerUser(t *testing.T) {
	ev := newEnvWith(t, app.WithOwnerLimits(5, 3))
	u, other := newUser(), newUser()
	status(t, ev.do(t, u, "POST", "/user/labels", labelsJSON("a", 1, 2, 3, 4)), 200)
	status(t, ev.do(t, u, "POST", "/user/labels", labelsJSON("b", 1, 5)), 200)
	expectError(t, ev.do(t, u, "POST", "/user/labels", labelsJSON("c", 1, 6)), 400,
		"labels: at most 5 labels per user; you have 5 and this request adds 1")
	expect(t, ev.do(t, u, "GET", "/user/labels", nil), 200, `[{"name":"b1","note":"","address":"`+evmAddr(1)+`","chainType":"evm"},
		  {"name":"a2","note":"","address":"`+evmAddr(2)+`","chainType":"evm"},
		  {"name":"a3","note":"","address":"`+evmAddr(3)+`","chainType":"evm"},
		  {"name":"a4","note":"","address":"`+evmAddr(4)+`","chainType":"evm"},
		  {"name":"b5","note":"","address":"`+evmAddr(5)+`","chainType":"evm"}]`)
	// At the cap, replacing stored labels (POST or PUT) still works.
	expect(t, ev.do(t, u, "POST", "/user/labels", labelsJSON("d", 1, 2)), 200, labelsJSON("d", 1, 2))
	status(t, ev.do(t, u, "PUT", "/user/labels/"+evmAddr(3)+":evm", `{"name":"e3","note":""}`), 200)
	expect(t, ev.do(t, u, "DELETE", "/user/labels/"+evmAddr(4)+":evm", nil), 200, `{"deleted":1}`)
	expect(t, ev.do(t, u, "POST", "/user/labels", labelsJSON("f", 6)), 200, labelsJSON("f", 6))
	expectError(t, ev.do(t, u, "POST", "/user/labels", labelsJSON("g", 7)), 400,
		"labels: at most 5 labels per user; you have 5 and this request adds 1")
	expect(t, ev.do(t, other, "POST", "/user/labels", labelsJSON("h", 1, 2, 3, 4, 5)), 200, labelsJSON("h", 1, 2, 3, 4, 5))
}

// A user stores at most the configured number of entities; a creation that would pass the cap
// is a 400 naming it and creates none of its entities.
func TestEntityCapPerUser(t *testing.T) {
	ev := newEnvWith(t, app.WithOwnerLimits(5, 3))
	u := newUser()
	first := decode[[]app.Entity](t, ev.do(t, u, "POST", "/user/entities",
		`[{"name":"one","addresses":{"evm":["`+evmAddr(1)+`"]}},{"name":"two","addresses":{}}]`))
	expectError(t, ev.do(t, u, "POST", "/user/entities",
		`[{"name":"three","addresses":{"evm":["`+evmAddr(3)+`"]}},{"name":"four","addresses":{}}]`), 400,
		"entities: at most 3 entities per user; you have 2 and this request adds 2")
	expect(t, ev.do(t, u, "GET", "/user/entities?includeAddresses=true", nil), 200, "["+
		entityJSON(first[0], "one", "", false, `{"evm":["`+evmAddr(1)+`"]}`)+","+
		entityJSON(first[1], "two", "", false, `{}`)+"]")
	status(t, ev.do(t, u, "POST", "/user/entities", `{"name":"three","addresses":{}}`), 200)
	expectError(t, ev.do(t, u, "POST", "/user/entities", `{"name":"four","addresses":{}}`), 400,
		"entities: at most 3 entities per user; you have 3 and this request adds 1")
	expect(t, ev.do(t, u, "DELETE", "/user/entities/"+first[1].ID, nil), 200, `{"deleted":1}`)
	status(t, ev.do(t, u, "POST", "/user/entities", `{"name":"four","addresses":{}}`), 200)
}

// The operator entities a user added addresses to count as entities they store: the first
// addition to another one is refused at the cap (nothing recorded), more addresses for one
// already counted are not.
func TestOperatorAdditionsCountAgainstTheEntityCap(t *testing.T) {
	ev := newEnvWith(t, app.WithOwnerLimits(5, 3))
	u := newUser()
	status(t, ev.do(t, u, "POST", "/user/entities", `[{"name":"one","addresses":{}},{"name":"two","addresses":{}}]`), 200)
	expect(t, ev.do(t, u, "PUT", "/user/entities/only_add/binance", `{"addresses":{"evm":["`+evmAddr(1)+`"]}}`), 200,
		`{"id":"binance","addresses":{"evm":["`+evmAddr(1)+`"]}}`)
	expect(t, ev.do(t, u, "PUT", "/user/entities/only_add/binance", `{"addresses":{"evm":["`+evmAddr(2)+`"]}}`), 200,
		`{"id":"binance","addresses":{"evm":["`+evmAddr(1)+`","`+evmAddr(2)+`"]}}`)
	expectError(t, ev.do(t, u, "PUT", "/user/entities/only_add/kraken", `{"addresses":{"evm":["`+evmAddr(1)+`"]}}`), 400,
		"entities: at most 3 entities per user; you have 3 and this request adds 1")
	expect(t, ev.do(t, u, "GET", "/internal/additions/kraken", nil), 200, `{"addresses":{}}`)
	expectError(t, ev.do(t, u, "POST", "/user/entities", `{"name":"three","addresses":{}}`), 400,
		"entities: at most 3 entities per user; you have 3 and this request adds 1")
}

// At most MaxEntitiesPerWrite entities per POST, like labels; a bigger body stores nothing. The
// entities of a full batch come back, and are listed, in request order.
func TestEntityBatchSizeLimit(t *testing.T) {
	ev := newEnv(t)
	u := newUser()
	batch := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(`{"name":"e%d","addresses":{"evm":[%q]}}`, i, evmAddr(i))
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	expectError(t, ev.do(t, u, "POST", "/user/entities", batch(app.MaxEntitiesPerWrite+1)), 400,
		"body: at most 1000 entities per request (got 1001)")
	expect(t, ev.do(t, u, "GET", "/user/entities", nil), 200, `[]`)
	created := decode[[]app.Entity](t, ev.do(t, u, "POST", "/user/entities", batch(app.MaxEntitiesPerWrite)))
	listed := decode[[]app.Entity](t, ev.do(t, u, "GET", "/user/entities?includeAddresses=true", nil))
	if len(created) != app.MaxEntitiesPerWrite || len(listed) != len(created) {
		t.Fatalf("created %d, listed %d", len(created), len(listed))
	}
	for i := range created {
		want := fmt.Sprintf("e%d", i)
		if created[i].Name != want || listed[i].ID != created[i].ID || listed[i].Addresses["evm"][0] != evmAddr(i) {
			t.Fatalf("entity %d: created %s %q, listed %s %v", i, created[i].ID, created[i].Name, listed[i].ID, listed[i].Addresses)
		}
	}
}

// Concurrent writers of one user cannot pass either cap together: 20 parallel POSTs of 5 new
// labels against a cap of 50 store exactly 10 of them, and 20 parallel entity creations against
// a cap of 10 create exactly 10.
func TestConcurrentWritersCannotPassTheOwnerCaps(t *testing.T) {
	ev := newEnvWith(t, app.WithOwnerLimits(50, 10))
	u := newUser()
	const calls, per = 20, 5
	run := func(body func(i int) string, path, refusal string) int {
		results := make([]resp, calls)
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() { results[i] = ev.do(t, u, "POST", path, body(i)) })
		}
		wg.Wait()
		ok := 0
		for i, r := range results {
			switch {
			case r.Status == 200:
				ok++
			case r.Status != 400 || !strings.Contains(r.Body, refusal):
				t.Fatalf("call %d: %d %s", i, r.Status, r.Body)
			}
		}
		return ok
	}
	ok := run(func(i int) string {
		return labelsJSON("n", i*per, i*per+1, i*per+2, i*per+3, i*per+4)
	}, "/user/labels", "at most 50 labels per user")
	n := len(decode[[]app.Label](t, ev.do(t, u, "GET", "/user/labels", nil)))
	if ok != 10 || n != 50 {
		t.Fatalf("labels: %d writes succeeded, %d stored; want 10 and 50", ok, n)
	}
	ok = run(func(i int) string { return fmt.Sprintf(`{"name":"e%d","addresses":{}}`, i) },
		"/user/entities", "at most 10 entities per user")
	n = len(decode[[]app.Entity](t, ev.do(t, u, "GET", "/user/entities", nil)))
	if ok != 10 || n != 10 {
		t.Fatalf("entities: %d creations succeeded, %d stored; want 10 and 10", ok, n)
	}
}
