package edge_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge"
)

// creditEdge is an edge with two tiers of 1,000 credits a period, one without overage (small)
// and one with (roomy), and a third without overage of 10,000 (tiny), all with rate to spare
// (heavy calls too: one heavy budget per key covers every heavy route, and the tests make
// several heavy calls in a row).
func creditEdge(t *testing.T) *testEdge {
	t.Helper()
	table := filepath.Join(t.TempDir(), "tiers.yaml")
	if err := writeFile(table, `
tiers:
  - {name: small, rate: 1000, burst: 1000, heavyRate: 1000, includedCredits: 1000, overage: false}
  - {name: tiny, rate: 1000, burst: 1000, heavyRate: 1000, includedCredits: 10000, overage: false}
  - {name: roomy, rate: 1000, burst: 1000, heavyRate: 1000, includedCredits: 1000, overage: true}
`); err != nil {
		t.Fatal(err)
	}
	return newEdge(t, edgeOpts{tune: func(c *edge.Config) { c.TiersFile = table }})
}

// batchBody is a batch body of n distinct addresses (named after tag), or of one address n
// times.
func batchBody(tag string, n int, distinct bool) string {
	as := make([]string, n)
	for i := range as {
		if distinct {
			as[i] = fmt.Sprintf(`"0x%s%038d"`, tag, i)
		} else {
			as[i] = `"0x` + tag + `"`
		}
	}
	return `{"addresses":[` + strings.Join(as, ",") + `]}`
}

// period reads the caller's current credit period once the consumer has counted used credits.
func period(t *testing.T, e *testEdge, key string, used int64) creditPeriod {
	t.Helper()
	var p creditPeriod
	eventually(t, 30*time.Second, func() error {
		ps := decode[[]creditPeriod](t, e.get("/analytics/credit-periods", key))
		if len(ps) != 1 || ps[0].CreditsUsed != used {
			return fmt.Errorf("periods %+v, want %d used", ps, used)
		}
		p = ps[0]
		return nil
	})
	return p
}

// Calls of one key in flight at once each hold what they can cost: on a tier without overage
// they never together pass its credits (the rest get 429, nothing charged), while a tier with
// overage is not limited. The durable ledger ends where the headers say.
func TestConcurrentCallsNeverPassANoOverageLimit(t *testing.T) {
	e := creditEdge(t)
	tiny, _ := e.key(t, edge.KeySpec{Tier: "tiny", Role: httpx.RoleIndividual})
	roomy, _ := e.key(t, edge.KeySpec{Tier: "roomy", Role: httpx.RoleIndividual})
	const n = 10
	// 1,000 distinct addresses at 2 credits each: 2,000 a call, 20,000 for the ten; the backend
	// holds every call it receives until all twenty calls have arrived or been refused.
	body := batchBody("a", 1000, true)
	path := "/intelligence/address/batch/all?block=1&rows=1000"
	type answer struct {
		key string
		r   result
	}
	answers := make(chan answer, 2*n)
	for i := 0; i < n; i++ {
		for _, k := range []string{tiny, roomy} {
			go func() { answers <- answer{k, e.send("POST", path, k, body)} }()
		}
	}
	var got []answer
	eventually(t, 20*time.Second, func() error {
		for len(answers) > 0 {
			got = append(got, <-answers)
		}
		if len(got)+e.backendCalls() < 2*n {
			return fmt.Errorf("%d answered, %d in the backend", len(got), e.backendCalls())
		}
		return nil
	})
	close(e.backend.release)
	for len(got) < 2*n {
		got = append(got, <-answers)
	}
	var tinyUsed, roomyUsed []int64
	refused := 0
	for _, a := range got {
		r := a.r
		switch {
		case r.Status == 429 && a.key == tiny:
			refused++
			if r.Body != `{"error":"credit limit reached"}`+"\n" || r.Header.Get("X-Credits-Used") != "0" ||
				r.Header.Get("X-Credits-Period-Limit") != "10000" || r.Header.Get("Retry-After") == "" {
				t.Errorf("refused: %v %s", r.Header, r.Body)
			}
		case r.Status != 200 || r.Header.Get("X-Credits-Used") != "2000":
			t.Fatalf("%d %v %s", r.Status, r.Header, r.Body)
		case a.key == tiny:
			u, _ := strconv.ParseInt(r.Header.Get("X-Credits-Period-Used"), 10, 64)
			tinyUsed = append(tinyUsed, u)
		default:
			u, _ := strconv.ParseInt(r.Header.Get("X-Credits-Period-Used"), 10, 64)
			roomyUsed = append(roomyUsed, u)
		}
	}
	slices.Sort(tinyUsed)
	slices.Sort(roomyUsed)
	if want := []int64{2000, 4000, 6000, 8000, 10000}; refused != 5 || !reflect.DeepEqual(tinyUsed, want) {
		t.Fatalf("no overage: %d refused, period used %v; want 5 refused and %v", refused, tinyUsed, want)
	}
	if len(roomyUsed) != n || roomyUsed[n-1] != 20000 {
		t.Fatalf("overage: period used %v, want ten calls up to 20000", roomyUsed)
	}
	if p := period(t, e, tiny, 10000); p.ExtraCredits != 0 {
		t.Fatalf("no overage period %+v", p)
	}
	if p := period(t, e, roomy, 20000); p.ExtraCredits != 19000 {
		t.Fatalf("overage period %+v", p)
	}
	// Spent: the next call, however small, is refused.
	if r := e.send("POST", "/intelligence/address/batch/all?rows=1", tiny, batchBody("b", 1, true)); r.Status != 429 ||
		r.Header.Get("X-Credits-Period-Used") != "10000" {
		t.Fatalf("after the limit: %d %v %s", r.Status, r.Header, r.Body)
	}
}

// A call is refused before it is forwarded when the most it can cost (the weight times the
// distinct addresses of a batch, or the rows its limit asks for) does not fit in what is left;
// a batch is charged per distinct address, never more than it held.
func TestCallWhoseBoundExceedsWhatIsLeftIsRefused(t *testing.T) {
	e := creditEdge(t)
	small, _ := e.key(t, edge.KeySpec{Tier: "small", Role: httpx.RoleIndividual})
	roomy, _ := e.key(t, edge.KeySpec{Tier: "roomy", Role: httpx.RoleIndividual})
	check := func(what string, r result, status int, body string, credits, used string) {
		t.Helper()
		if r.Status != status || (body != "" && r.Body != body+"\n") || r.Header.Get("X-Credits-Used") != credits ||
			r.Header.Get("X-Credits-Period-Used") != used || r.Header.Get("X-Credits-Period-Limit") != "1000" {
			t.Fatalf("%s: %d %v %s", what, r.Status, r.Header, r.Body)
		}
	}
	const enriched = "/intelligence/address_enriched/batch/all?rows=1000"
	r := e.send("POST", enriched, small, batchBody("c", 1000, true))
	check("1,000 addresses at 4", r, 429, `{"error":"credit limit reached: this call can cost up to 4000 credits (4 per row, up to 1000 rows) and 1000 of the period's 1000 are left"}`, "0", "0")
	if e.backendCalls() != 0 {
		t.Fatalf("a refused call reached the service")
	}
	// One address a thousand times is one row (the service answers one key); an older service
	// reporting the thousand requested is still charged what the call held.
	check("one address 1,000 times", e.send("POST", enriched, small, batchBody("d", 1000, false)), 200, "", "4", "4")
	r = e.get("/swaps?limit=1000&rows=1000", small)
	check("/swaps limit=1000", r, 429, `{"error":"credit limit reached: this call can cost up to 2000 credits (2 per row, up to 1000 rows) and 996 of the period's 1000 are left"}`, "0", "4")
	check("/transfers limit=10", e.get("/transfers?limit=10&rows=10", small), 200, "", "20", "24")
	// Without limit the default 50 rows are held (1 credit a row).
	check("/transfers/unenriched", e.get("/transfers/unenriched?rows=50", small), 200, "", "50", "74")
	// With overage the same calls go through and are charged in full.
	if r := e.send("POST", enriched, roomy, batchBody("e", 1000, true)); r.Status != 200 || r.Header.Get("X-Credits-Used") != "4000" {
		t.Fatalf("overage: %d %v %s", r.Status, r.Header, r.Body)
	}
	period(t, e, small, 74)
	period(t, e, roomy, 4000)
}

// What a call held is released when the service fails it (4xx or 5xx cost nothing): while it
// is in flight its credits are not available to other calls, and once it has failed they are.
func TestHeldCreditsReleasedOnFailedCall(t *testing.T) {
	e := creditEdge(t)
	small, _ := e.key(t, edge.KeySpec{Tier: "small", Role: httpx.RoleIndividual})
	const batch = "/intelligence/address/batch/all"
	failed := make(chan result, 1)
	go func() {
		failed <- e.send("POST", batch+"?block=1&status=500&rows=400", small, batchBody("f", 400, true))
	}()
	eventually(t, time.Minute, func() error {
		if e.backendCalls() != 1 {
			return fmt.Errorf("not in flight yet")
		}
		return nil
	})
	r := e.send("POST", batch+"?rows=400", small, batchBody("g", 400, true))
	if r.Status != 429 || r.Body != `{"error":"credit limit reached: this call can cost up to 800 credits (2 per row, up to 400 rows) and 200 of the period's 1000 are left"}`+"\n" {
		t.Fatalf("beside a call in flight: %d %s", r.Status, r.Body)
	}
	close(e.backend.release)
	if r := <-failed; r.Status != 500 || r.Header.Get("X-Credits-Used") != "0" || r.Header.Get("X-Credits-Period-Used") != "0" {
		t.Fatalf("failed call: %d %v", r.Status, r.Header)
	}
	if r := e.send("POST", batch+"?rows=400", small, batchBody("g", 400, true)); r.Status != 200 || r.Header.Get("X-Credits-Period-Used") != "800" {
		t.Fatalf("after the failure: %d %v %s", r.Status, r.Header, r.Body)
	}
	if r := e.send("POST", batch+"?rows=100&status=404", small, batchBody("h", 100, true)); r.Status != 404 || r.Header.Get("X-Credits-Used") != "0" {
		t.Fatalf("404: %d %v", r.Status, r.Header)
	}
	if r := e.send("POST", batch+"?rows=100", small, batchBody("h", 100, true)); r.Status != 200 || r.Header.Get("X-Credits-Period-Used") != "1000" {
		t.Fatalf("after the 404: %d %v %s", r.Status, r.Header, r.Body)
	}
	period(t, e, small, 1000)
}

// A response the service cuts short after its header is aborted by the reverse proxy with a
// panic (http.ErrAbortHandler) after the credit headers went out. The call is charged as they
// said and its usage event recorded all the same, so the durable ledger counts it and the live
// total comes back to the durable figure, rather than keeping the call in the replica's total
// for as long as the caller stays active.
func TestResponseCutShortIsRecorded(t *testing.T) {
	e := newEdge(t, edgeOpts{})
	key, _ := e.key(t, edge.KeySpec{Tier: "api", Role: httpx.RoleIndividual})
	srv := httptest.NewServer(e.Handler) // a real server: the proxy panics only under one
	defer srv.Close()
	req, err := http.NewRequest("GET", srv.URL+"/balances/entity/binance?cut=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("API-Key", key)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Credits-Used") != "5" || resp.Header.Get("X-Credits-Period-Used") != "5" || err == nil {
		t.Fatalf("cut short: %d %v, reading the body: %v", resp.StatusCode, resp.Header, err)
	}
	if r := e.get("/balances/entity/binance", key); r.Status != 200 || r.Header.Get("X-Credits-Period-Used") != "10" {
		t.Fatalf("a whole call after it: %d %v", r.Status, r.Header)
	}
	period(t, e, key, 10)
	if r := e.get("/balances/entity/binance", key); r.Status != 200 || r.Header.Get("X-Credits-Period-Used") != "15" {
		t.Fatalf("a call once both are counted: %d %v", r.Status, r.Header)
	}
	period(t, e, key, 15)
}

// HEAD on a proxied GET route (which the services do not serve) is a 405 at the edge before
// the rate limiter and metering: no token, no usage event, no call upstream. The edge's own
// routes answer HEAD as GET.
func TestHeadOnProxiedRouteRefusedBeforeMetering(t *testing.T) {
	e := newEdge(t, edgeOpts{})
	key, _ := e.key(t, edge.KeySpec{Tier: "api", Role: httpx.RoleIndividual})
	for path, allow := range map[string]string{"/intelligence/address/0xabc": "GET", "/user/labels": "GET, POST, DELETE", "/transfers/histogram/simple": "GET"} {
		r := e.do("HEAD", path, key)
		if r.Status != 405 || r.Header.Get("Allow") != allow || r.Header.Get("X-RateLimit-Limit") != "" || r.Header.Get("X-Credits-Used") != "" ||
			r.Body != `{"error":"method HEAD not allowed on `+path+` (allowed: `+allow+`)"}`+"\n" {
			t.Fatalf("HEAD %s: %d %v %s", path, r.Status, r.Header, r.Body)
		}
	}
	if e.backendCalls() != 0 {
		t.Fatalf("HEAD reached the service")
	}
	if r := e.do("HEAD", "/health", ""); r.Status != 200 {
		t.Fatalf("HEAD /health: %d", r.Status)
	}
	if r := e.do("HEAD", "/chains", key); r.Status != 200 {
		t.Fatalf("HEAD /chains: %d", r.Status)
	}
	// A GET after them: once it is counted, the HEADs would have been.
	e.get("/tx/0x01", key)
	eventually(t, 30*time.Second, func() error {
		ec := decode[endpointCalls](t, e.get("/analytics/endpoint-calls", key))
		calls := map[string]int64{}
		for _, dp := range ec.DataPoints {
			for p, n := range dp.CallBreakdown {
				calls[p] += n
			}
		}
		if calls["/tx/{hash}"] != 1 {
			return fmt.Errorf("GET not counted yet: %v", calls)
		}
		if calls["/intelligence/address/{address}"] != 0 || calls["/user/labels"] != 0 {
			t.Fatalf("HEAD recorded as usage: %v", calls)
		}
		return nil
	})
}

// /transfers/histogram/simple is free and limited per client IP without a key; with one it is
// the key's call, limited per key and charged its 2 credits (API.md); a bad key is a 401.
func TestSimpleHistogramChargedWithAKey(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true})
	key, _ := e.key(t, edge.KeySpec{Tier: "api", Role: httpx.RoleIndividual})
	r := e.get("/transfers/histogram/simple", key)
	if r.Status != 200 || r.Header.Get("X-Credits-Used") != "2" || r.Header.Get("X-Credits-Period-Used") != "2" || r.Header.Get("X-RateLimit-Limit") != "100" {
		t.Fatalf("with a key: %d %v", r.Status, r.Header)
	}
	r = e.get("/transfers/histogram/simple", "")
	if r.Status != 200 || r.Header.Get("X-Credits-Used") != "" || r.Header.Get("X-RateLimit-Limit") != strconv.Itoa(e.cfg.PublicBurst) {
		t.Fatalf("without a key: %d %v", r.Status, r.Header)
	}
	if r := e.get("/transfers/histogram/simple", "ci_wrong"); r.Status != 401 {
		t.Fatalf("bad key: %d %s", r.Status, r.Body)
	}
}
