package http

import (
	"testing"

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
