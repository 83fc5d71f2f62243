package intelligence

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/inteltest"
)

func TestMain(m *testing.M) { os.Exit(inteltest.Main(m)) }

const testSecret = "intelligence-test-secret"

// testConfig is a configuration pointing at the package's database (no brokers).
func testConfig(t testing.TB) Config {
	var cfg Config
	cfg.DatabaseURL = pgtest.URL(t)
	cfg.InternalSecret = testSecret
	return cfg
}

// resetDB empties every intel table, so each test starts from nothing.
func resetDB(t testing.TB) {
	t.Helper()
	_, err := pgtest.Pool(t).Exec(context.Background(), `TRUNCATE intel.entities, intel.tags, intel.claims, intel.address_tags,
		intel.addresses, intel.consumer_offsets, intel.edges, intel.address_activity, intel.settled_activity, intel.pair_activity, intel.entity_internal, intel.entity_moves, intel.balances, intel.contracts, intel.tokens,
		intel.market_tokens, intel.token_deployments, intel.prices, intel.block_facts, intel.orphaned_blocks,
		intel.transfer_ids, intel.displaced_facts, intel.change_log, intel.entity_tags_dirty, intel.heuristics_passes CASCADE; UPDATE intel.publish_cursor SET version = 0`)
	if err != nil {
		t.Fatal(err)
	}
}

// testAPI is the service's real router over the package database, with a freshly loaded cache.
type testAPI struct {
	h     http.Handler
	cache *attribution.AttributionCache
	app   *app.Service
}

func newTestAPI(t testing.TB, ul app.UserLabels, tr app.Activity) *testAPI {
	t.Helper()
	set, _ := chains.NewSet(nil)
	a := &app.Service{Chains: set, UserLabels: ul, Transfers: tr}
	h := inteltest.Router(t, Name, httpx.NewSigner(testSecret), a)
	return &testAPI{h: h, cache: a.Cache, app: a}
}

// do sends a request (with a signed caller identity when id is not nil) and returns status and body.
func (api *testAPI) do(t testing.TB, method, path, body string, id *httpx.Identity) (int, string) {
	t.Helper()
	w := api.send(t, method, path, body, id)
	return w.Code, w.Body.String()
}

// send is do returning the whole response.
func (api *testAPI) send(t testing.TB, method, path, body string, id *httpx.Identity) *httptest.ResponseRecorder {
	t.Helper()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	if id != nil {
		httpx.NewSigner(testSecret).Sign(req.Header, *id, timeNow())
	}
	w := httptest.NewRecorder()
	api.h.ServeHTTP(w, req)
	return w
}

func timeNow() time.Time { return time.Now() }

// assertJSON compares two JSON documents by value.
func assertJSON(t testing.TB, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: answer is not JSON (%v): %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: expected value is not JSON: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, compact(want))
	}
}

func compact(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

func pgtestPoolCount(t testing.TB, n *int) error {
	return pgtest.Pool(t).QueryRow(context.Background(), "SELECT count(*) FROM intel.addresses").Scan(n)
}
