package http_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	svchttp "github.com/chainintel/chainintel/services/transfers/internal/http"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// callCounter is a proxy in front of the real user-labels service that counts the calls it
// passes on, by method, path and query.
type callCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *callCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = map[string]int{}
	return out
}

func countingProxy(t *testing.T, target string) (*callCounter, string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	c := &callCounter{calls: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := r.Method + " " + r.URL.Path
		if r.URL.RawQuery != "" {
			k += "?" + r.URL.RawQuery
		}
		c.mu.Lock()
		c.calls[k]++
		c.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

// A request naming many entities (operator and user ones, in every reference parameter) asks
// user-labels once per kind: one POST /internal/entities for the user entities, one lookup with
// additions for the operator entities, besides the page's label lookup (at most one); and answers as the
// same references one at a time do. An unknown operator entity is a 404 after the one call
// for the caller's additions; an unknown user entity is a 404 after the one batch call; more than
// query.MaxEntityRefs entity references in a parameter is a 400 without any call.
func TestEntityReferencesOneCallPerKind(t *testing.T) {
	e := world(t)
	counter, proxied := countingProxy(t, e.ulURL)
	client, err := ulclient.New(proxied, httpx.NewSigner(secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := chains.NewSet(nil)
	r := httpx.NewEngine(httpx.EngineOptions{Service: "transfers"})
	r.Use(httpx.IdentityMiddleware(httpx.NewSigner(secret)))
	svchttp.Register(r, app.New(e.store, app.NewLabelCache(client, time.Minute, 1000), cs),
		query.Parser{Chains: cs, Now: func() time.Time { return tw.Now }})
	get := func(path string) resp {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		httpx.NewSigner(secret).Sign(req.Header, alice, time.Now())
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return resp{w.Code, w.Header(), w.Body.Bytes()}
	}
	// Three more entities of alice's, holding addresses no transfer has.
	var mine []string
	for i := range 3 {
		mine = append(mine, createEntity(t, e.ulURL, fmt.Sprintf("0x90000000000000000000000000000000000000%02x", i+1)))
	}
	users := strings.Join(append(mine, e.aliceEntity), ",")
	ops := "binance,coinbase,uniswap,a16z"
	entities, additions, labels := "POST /internal/entities", "POST /internal/additions", "POST /internal/lookup"
	wantCalls := func(name string, want map[string]int) {
		t.Helper()
		got := counter.take()
		if got[labels] > 1 {
			t.Fatalf("%s: %d label lookups, want at most one (the page's addresses not in the cache)", name, got[labels])
		}
		delete(got, labels)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: user-labels calls %v, want %v", name, got, want)
		}
	}

	for _, path := range []string{
		"/transfers?base=" + ops + "," + users + "&counterparties=" + ops + "," + users +
			"&from=" + ops + "," + users + "&to=!uniswap,!" + strings.Join(mine, ",!"),
		"/transfers?from=" + ops + "," + users + "&to=" + users + "," + ops + "&chains=ethereum",
		"/swaps?base=" + ops + "," + users + "&senders=" + ops + "," + users + "&receivers=" + ops + "," + users,
	} {
		want := e.get(t, &alice, path) // the env's router: the same references, the same answer
		got := get(path)
		if got.status != 200 || !bytes.Equal(got.body, want.body) {
			t.Fatalf("%s: %d %s\nwant %d %s", path, got.status, got.body, want.status, want.body)
		}
		if bytes.Contains(got.body, []byte(`"count":0`)) {
			t.Fatalf("%s: nothing matched, the test shows little: %s", path, got.body)
		}
		wantCalls(path, map[string]int{entities: 1, additions: 1})
	}
	// Histograms show no addresses: the two reference calls only.
	sameJSON(t, get("/transfers/histogram/simple?base="+ops+","+users+"&timeLast=3650d"), 200,
		string(e.get(t, &alice, "/transfers/histogram/simple?base="+ops+","+users+"&timeLast=3650d").body))
	wantCalls("histogram", map[string]int{entities: 1, additions: 1})

	// Unknown operator entities: a 404 naming the first, in the order of the parameters, after
	// the one call for the caller's additions (which would make one known) and none for user
	// entities.
	var nopes []string
	for i := range query.MaxEntityRefs {
		nopes = append(nopes, fmt.Sprintf("nope%d", i))
	}
	for _, tc := range []struct{ path, want string }{
		{"/transfers/histogram/simple?base=" + strings.Join(nopes, ","), `{"error":"base: unknown entity \"nope0\""}`},
		{"/transfers?base=binance," + users + "&from=" + users + "&to=" + strings.Join(nopes, ","), `{"error":"to: unknown entity \"nope0\""}`},
		{"/swaps?senders=" + users + ",a16z&receivers=coinbase,nope7", `{"error":"receivers: unknown entity \"nope7\""}`},
	} {
		sameJSON(t, get(tc.path), 404, tc.want)
		wantCalls(tc.path, map[string]int{additions: 1})
	}
	// An id neither the read model nor intelligence knows that the caller added addresses to is
	// the caller's entity, as before; still one call per kind.
	userLabels(t, e.ulURL, "PUT", "/user/entities/only_add/alices-own", `{"addresses":{"evm":["`+tw.F+`"]}}`)
	sameJSON(t, get("/transfers?base=alices-own,nope3,"+users), 404, `{"error":"base: unknown entity \"nope3\""}`)
	wantCalls("additions to an unknown id", map[string]int{additions: 1})
	if res := get("/transfers?base=alices-own," + users); res.status != 200 || bytes.Contains(res.body, []byte(`"count":0`)) {
		t.Fatalf("base=alices-own (the caller's additions: the fund): %d %s", res.status, res.body)
	}
	wantCalls("additions to an unknown id", map[string]int{entities: 1, additions: 1})
	// An unknown user entity: a 404 after the one batch call (and, binance named, the one for
	// additions).
	unknown := "8f0e2c55-1111-4222-8333-944455556666"
	sameJSON(t, get("/transfers?base=binance,"+users+"&counterparties="+unknown+","+mine[0]), 404,
		`{"error":"counterparties: unknown entity \"`+unknown+`\""}`)
	wantCalls("unknown user entity", map[string]int{entities: 1, additions: 1})
	sameJSON(t, get("/transfers?base="+users+","+strings.ToUpper(unknown)), 404, `{"error":"base: unknown entity \"`+unknown+`\""}`)
	wantCalls("unknown user entity alone", map[string]int{entities: 1})

	// The cap: more than query.MaxEntityRefs entity references in one parameter is a 400 (the
	// audit's 1,000 repeated keys too), with no call.
	var many []string
	for i := range 1000 {
		many = append(many, fmt.Sprintf("base=ent%d", i))
	}
	for _, tc := range []struct{ path, want string }{
		{"/transfers/histogram/simple?" + strings.Join(many, "&"),
			`{"error":"base: at most 100 entity references (entity ids, type: and deposit: values), got 1000"}`},
		{"/transfers?from=" + strings.Join(nopes, ",") + ",type:cex", `{"error":"from: at most 100 entity references (entity ids, type: and deposit: values), got 101"}`},
		{"/swaps?base=binance&counterparties=" + strings.Join(nopes, ",") + ",a16z", `{"error":"counterparties: at most 100 entity references (entity ids, type: and deposit: values), got 101"}`},
	} {
		sameJSON(t, get(tc.path), 400, tc.want)
		wantCalls(tc.path[:20], map[string]int{})
	}
	// Addresses do not count towards it: 100 entity references and more addresses are fine.
	var addrs []string
	for i := range 150 {
		addrs = append(addrs, fmt.Sprintf("0x8%039x", i))
	}
	if r := get("/transfers/histogram?base=" + strings.Join(append(nopes[:96], append(addrs, ops)...), ",")); r.status != 404 {
		t.Fatalf("100 entity references and 150 addresses: %d %s, want the unknown entity's 404", r.status, r.body)
	}
	wantCalls("addresses", map[string]int{additions: 1})
}

// createEntity creates a user entity of alice's holding addr, straight at user-labels.
func createEntity(t *testing.T, ulURL, addr string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"name": "e " + addr, "addresses": map[string][]string{"evm": {addr}}})
	var out []ulclient.UserEntity
	if json.Unmarshal(userLabels(t, ulURL, http.MethodPost, "/user/entities", string(b)), &out) != nil || len(out) != 1 {
		t.Fatal("create entity: not one entity")
	}
	return out[0].ID
}

// userLabels makes a request of alice's straight at user-labels and returns its 200 body.
func userLabels(t *testing.T, ulURL, method, path, body string) []byte {
	t.Helper()
	req, _ := http.NewRequest(method, ulURL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	httpx.NewSigner(secret).Sign(req.Header, alice, time.Now())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("user-labels %s %s: %d %s", method, path, res.StatusCode, b)
	}
	return b
}
