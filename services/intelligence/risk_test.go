package intelligence

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// riskWorld is a known world for the risk scores (evm):
//
//	M (tornado, a mixer) → B2 (100 USD) → B1 (80) → X (60)    X's backward chain: M 3 hops away
//	X → F1 (50) → S (40, tagged ofac-sanctioned)               X's forward chain: S 2 hops away
//	X → H (1,000), H (hubex, a cex) → W1..W250 (0.01·i USD)    the hub: 250 outgoing pairs
//	W250 is tagged scam; W1 belongs to a gambling entity.
//
// A hop keeps the 200 largest pairs, so from H (and X's second forward hop through it) W1..W50
// are cut: the gambling seed is never reached, and gambling_score is 0 (a gambling seed
// exists), where categories without any seed are null.
type riskWorld struct {
	x, b1, b2, m, f1, s, h, h2 string
	w                          []string // w[i] is W(i+1)
}

func newRiskWorld(t *testing.T) riskWorld {
	t.Helper()
	resetDB(t)
	w := riskWorld{x: addr(0x100), b1: addr(0x101), b2: addr(0x102), m: addr(0x103), f1: addr(0xb104),
		s: addr(0xa105), h: addr(0x106), h2: addr(0x107)}
	for i := 1; i <= 250; i++ {
		w.w = append(w.w, addr(0x1000+i))
	}
	ctx := context.Background()
	pool := pgtest.Pool(t)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	entity := func(id, name, typ string, addrs ...string) {
		exec(`INSERT INTO intel.entities (id, name, type, source, version) VALUES ($1, $2, $3, 'test', nextval('intel.attribution_version'))`, id, name, typ)
		for _, a := range addrs {
			exec(`INSERT INTO intel.addresses (chain_type, address, entity_id, version) VALUES ('evm', $1, $2, nextval('intel.attribution_version'))`, a, id)
		}
	}
	entity("tornado", "Tornado", "mixer", w.m)
	entity("hubex", "Hub Exchange", "cex", w.h, w.h2)
	entity("lucky", "Lucky Casino", "gambling", w.w[0])
	exec(`INSERT INTO intel.tags (id, label) VALUES ('ofac-sanctioned', 'OFAC sanctioned'), ('scam', 'Scam')`)
	exec(`INSERT INTO intel.address_tags (chain_type, address, tag_id, source) VALUES ('evm', $1, 'ofac-sanctioned', 'test'), ('evm', $2, 'scam', 'test')`, w.s, w.w[249])
	pair := func(from, to string, usd float64) {
		exec(`INSERT INTO intel.pair_activity (chain_type, from_addr, to_addr, volume_usd, transfer_count) VALUES ('evm', $1, $2, $3, 1)`, from, to, usd)
	}
	pair(w.m, w.b2, 100)
	pair(w.b2, w.b1, 80)
	pair(w.b1, w.x, 60)
	pair(w.x, w.f1, 50)
	pair(w.f1, w.s, 40)
	pair(w.x, w.h, 1000)
	for i, a := range w.w {
		pair(w.h, a, float64(i+1)/100)
	}
	return w
}

var riskNow = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

const riskNowJSON = `"updated_at":"2026-11-27T12:00:00Z"`

func riskScores(sanctions, mixer, gambling, scam int) string {
	return fmt.Sprintf(`"sanctions_score":%d,"mixer_score":%d,"hacker_score":null,"ransomware_score":null,`+
		`"darkweb_score":null,"gambling_score":%d,"ponzi_score":null,"scam_score":%d,"privacy_score":null,`+
		`"non_kyc_service_score":null,"mixed_kyc_service_score":null,"token_blacklist_score":null`, sanctions, mixer, gambling, scam)
}

func TestRiskAddressScores(t *testing.T) {
	w := newRiskWorld(t)
	api := newTestAPI(t, nil, nil)
	api.app.Now = func() time.Time { return riskNow }
	cases := []struct{ name, addr, want string }{
		// Backward: M 3 hops (25, through 60 USD); forward: S and W250 2 hops (50 each; the
		// tie goes to sanctions, first in the table), W1..W50 cut by the hub's bound.
		{"X", w.x, `{"address":"` + w.x + `","chain_type":"evm","is_seed":false,"risk_level":"medium",` +
			`"max_score":50,"max_score_backward":25,"max_score_forward":50,"greatest_risk_category":"sanctions",` +
			`"greatest_risk_category_backward":"mixer","greatest_risk_category_forward":"sanctions",` +
			`"hop_distance":2,"max_hop_reached":3,` + riskScores(50, 25, 0, 50) + `,"sanctioned_1hop_score":0,` +
			`"risk_weighted_incoming_usd":15,"risk_weighted_outgoing_usd":21.25,"top_sources":[` +
			`{"seed_address":"` + w.s + `","risk_category":"sanctions","direction":"forward","hop_distance":2,"contribution_usd":40,"contribution_pct":3.81},` +
			`{"seed_address":"` + w.w[249] + `","risk_category":"scam","direction":"forward","hop_distance":2,"contribution_usd":2.5,"contribution_pct":0.24},` +
			`{"seed_address":"` + w.m + `","risk_category":"mixer","direction":"backward","hop_distance":3,"contribution_usd":60,"contribution_pct":100}],` +
			riskNowJSON + `}`},
		// A seed scores 100 in its category, backward and forward too.
		{"S", w.s, `{"address":"` + w.s + `","chain_type":"evm","is_seed":true,"risk_level":"severe",` +
			`"max_score":100,"max_score_backward":100,"max_score_forward":100,"greatest_risk_category":"sanctions",` +
			`"greatest_risk_category_backward":"sanctions","greatest_risk_category_forward":"sanctions",` +
			`"hop_distance":0,"max_hop_reached":3,` + riskScores(100, 0, 0, 0) + `,"sanctioned_1hop_score":100,` +
			`"risk_weighted_incoming_usd":0,"risk_weighted_outgoing_usd":0,"top_sources":[],` + riskNowJSON + `}`},
		// F1 pays S directly: 75, sanctioned at one hop; M is 4 hops back, out of reach.
		{"F1", w.f1, `{"address":"` + w.f1 + `","chain_type":"evm","is_seed":false,"risk_level":"high",` +
			`"max_score":75,"max_score_backward":0,"max_score_forward":75,"greatest_risk_category":"sanctions",` +
			`"greatest_risk_category_backward":null,"greatest_risk_category_forward":"sanctions",` +
			`"hop_distance":1,"max_hop_reached":3,` + riskScores(75, 0, 0, 0) + `,"sanctioned_1hop_score":75,` +
			`"risk_weighted_incoming_usd":0,"risk_weighted_outgoing_usd":30,"top_sources":[` +
			`{"seed_address":"` + w.s + `","risk_category":"sanctions","direction":"forward","hop_distance":1,"contribution_usd":40,"contribution_pct":100}],` +
			riskNowJSON + `}`},
		// An address without pairs: nothing reached, every present category 0.
		{"unknown", addr(0x999), `{"address":"` + addr(0x999) + `","chain_type":"evm","is_seed":false,"risk_level":"none",` +
			`"max_score":0,"max_score_backward":0,"max_score_forward":0,"greatest_risk_category":null,` +
			`"greatest_risk_category_backward":null,"greatest_risk_category_forward":null,` +
			`"hop_distance":null,"max_hop_reached":0,` + riskScores(0, 0, 0, 0) + `,"sanctioned_1hop_score":0,` +
			`"risk_weighted_incoming_usd":0,"risk_weighted_outgoing_usd":0,"top_sources":[],` + riskNowJSON + `}`},
	}
	for _, c := range cases {
		code, body := api.do(t, "GET", "/risk/address/"+c.addr, "", nil)
		if code != 200 || compact(body) != c.want {
			t.Errorf("%s: %d\n got %s\nwant %s", c.name, code, compact(body), c.want)
		}
	}
	// The address is read in any case (EVM) and answered normalised.
	if code, body := api.do(t, "GET", "/risk/address/0x"+strings.ToUpper(w.f1[2:]), "", nil); code != 200 || compact(body) != cases[2].want {
		t.Errorf("F1 in upper case: %d %s", code, compact(body))
	}
}

func TestRiskAddressPaths(t *testing.T) {
	w := newRiskWorld(t)
	api := newTestAPI(t, nil, nil)
	node := func(a string, hop int) string { return fmt.Sprintf(`{"address":"%s","hop_distance":%d}`, a, hop) }
	want := `{"address":"` + w.x + `","paths":[` +
		`{"chain_type":"evm","seed_address":"` + w.s + `","risk_category":"sanctions","direction":"forward","hop_distance":2,"score":50,"contribution_usd":40,` +
		`"path_nodes":[` + node(w.x, 0) + `,` + node(w.f1, 1) + `,` + node(w.s, 2) + `]},` +
		`{"chain_type":"evm","seed_address":"` + w.w[249] + `","risk_category":"scam","direction":"forward","hop_distance":2,"score":50,"contribution_usd":2.5,` +
		`"path_nodes":[` + node(w.x, 0) + `,` + node(w.h, 1) + `,` + node(w.w[249], 2) + `]},` +
		`{"chain_type":"evm","seed_address":"` + w.m + `","risk_category":"mixer","direction":"backward","hop_distance":3,"score":25,"contribution_usd":60,` +
		`"path_nodes":[` + node(w.x, 0) + `,` + node(w.b1, 1) + `,` + node(w.b2, 2) + `,` + node(w.m, 3) + `]}]}`
	if code, body := api.do(t, "GET", "/risk/address/"+w.x+"/paths", "", nil); code != 200 || compact(body) != want {
		t.Errorf("paths: %d\n got %s\nwant %s", code, compact(body), want)
	}
	want = `{"address":"` + w.m + `","paths":[{"chain_type":"evm","seed_address":"` + w.m + `","risk_category":"mixer",` +
		`"direction":"self","hop_distance":0,"score":100,"contribution_usd":null,"path_nodes":[` + node(w.m, 0) + `]}]}`
	if code, body := api.do(t, "GET", "/risk/address/"+w.m+"/paths", "", nil); code != 200 || compact(body) != want {
		t.Errorf("a seed's paths: %d\n got %s\nwant %s", code, compact(body), want)
	}
}

func TestRiskBatchesAndBadInput(t *testing.T) {
	w := newRiskWorld(t)
	api := newTestAPI(t, nil, nil)
	api.app.Now = func() time.Time { return riskNow }
	r := api.send(t, "POST", "/risk/address/batch", `{"addresses":["`+w.s+`","0x`+strings.ToUpper(w.s[2:])+`","`+w.s+`"]}`, nil)
	if r.Code != 200 || r.Header().Get(httpx.HeaderRows) != "2" {
		t.Fatalf("batch: %d rows %q %s", r.Code, r.Header().Get(httpx.HeaderRows), r.Body)
	}
	one := func(path string) string {
		_, body := api.do(t, "GET", path, "", nil)
		return compact(body)
	}
	// Each distinct address as given, scored as its own route scores it.
	wantBatch := `{"0x` + strings.ToUpper(w.s[2:]) + `":` + one("/risk/address/"+w.s) + `,"` + w.s + `":` + one("/risk/address/"+w.s) + `}`
	if got := compact(r.Body.String()); got != wantBatch {
		t.Errorf("batch:\n got %s\nwant %s", got, wantBatch)
	}
	er := api.send(t, "POST", "/risk/entity/batch", `{"entity_ids":["tornado","hubex","tornado"]}`, nil)
	wantEntities := `{"hubex":` + one("/risk/entity/hubex") + `,"tornado":` + one("/risk/entity/tornado") + `}`
	if er.Code != 200 || er.Header().Get(httpx.HeaderRows) != "2" || compact(er.Body.String()) != wantEntities {
		t.Errorf("entity batch: %d rows %q\n got %s\nwant %s", er.Code, er.Header().Get(httpx.HeaderRows), compact(er.Body.String()), wantEntities)
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = `"` + addr(i+1) + `"`
	}
	fives := strings.Repeat(`"tornado",`, 4) + `"hubex"`
	for _, c := range []struct{ method, path, body, want string }{
		{"GET", "/risk/address/nope", "", `{"error":"address: \"nope\" is not a valid address on any configured chain"}`},
		{"GET", "/risk/address/nope/paths", "", `{"error":"address: \"nope\" is not a valid address on any configured chain"}`},
		{"POST", "/risk/address/batch", `{"addresses":[]}`, `{"error":"addresses: give at least one of the addresses"}`},
		{"POST", "/risk/address/batch", `{}`, `{"error":"addresses: give at least one of the addresses"}`},
		{"POST", "/risk/address/batch", `{"addresses":[` + strings.Join(many, ",") + `]}`, `{"error":"addresses: at most 100 addresses per call, got 101"}`},
		{"POST", "/risk/address/batch", `{"addresses":["` + w.x + `","nope"]}`, `{"error":"addresses[1]: \"nope\" is not a valid address on any configured chain"}`},
		{"POST", "/risk/address/batch", `{"addresses":"` + w.x + `"}`, `{"error":"addresses: must be an array of strings, not a string"}`},
		{"POST", "/risk/entity/batch", `{"entity_ids":[]}`, `{"error":"entity_ids: give at least one of the entity ids"}`},
		{"POST", "/risk/entity/batch", `{"entity_ids":[` + fives + `]}`, `{"error":"entity_ids: at most 4 entity ids per call, got 5"}`},
		{"GET", "/risk/entity/nobody", "", `{"error":"unknown entity \"nobody\""}`},
		{"POST", "/risk/entity/batch", `{"entity_ids":["tornado","nobody"]}`, `{"error":"unknown entity \"nobody\""}`},
		{"GET", "/risk/entity/5a1e0c3d-2b4f-4e6a-8c9d-0f1e2d3c4b5a", "", `{"error":"unknown entity \"5a1e0c3d-2b4f-4e6a-8c9d-0f1e2d3c4b5a\""}`},
		{"GET", "/risk/address/batch", "", `{"error":"method GET not allowed on /risk/address/batch"}`},
	} {
		code, body := api.do(t, c.method, c.path, c.body, nil)
		wantCode := 400
		switch {
		case strings.Contains(c.want, "unknown entity"):
			wantCode = 404
		case strings.Contains(c.want, "not allowed"):
			wantCode = 405
		}
		if code != wantCode || compact(body) != c.want {
			t.Errorf("%s %s %s: %d %s, want %d %s", c.method, c.path, c.body, code, compact(body), wantCode, c.want)
		}
	}
}

func TestRiskEntityScores(t *testing.T) {
	w := newRiskWorld(t)
	caller := &httpx.Identity{KeyID: "k1", UserID: "u1", Role: httpx.RoleIndividual, Tier: "api"}
	api := newTestAPI(t, volumeUserLabels{addrs: []string{"0x" + strings.ToUpper(w.f1[2:]), w.f1, "nope"}}, nil)
	api.app.Now = func() time.Time { return riskNow }
	cases := []struct{ name, id, want string }{
		// The mixer's one address is a seed; nothing risky within 3 hops of it.
		{"tornado", "tornado", `{"entity_id":"tornado","entity_name":"Tornado","entity_type":"mixer","risk_level":"severe",` +
			`"max_score":100,"max_score_backward":100,"max_score_forward":100,"greatest_risk_category":"mixer",` +
			`"greatest_risk_category_backward":"mixer","greatest_risk_category_forward":"mixer",` +
			`"highest_risk_address":"` + w.m + `","risky_addresses":1,"risky_addresses_backward":1,"risky_addresses_forward":1,"seed_addresses":1,` +
			riskScores(0, 100, 0, 0) + `,"top_seed_addresses":[{"address":"` + w.m + `","chain_type":"evm","risk_category":"mixer","seed_score":100}],` +
			`"top_sources":[],` + riskNowJSON + `}`},
		// The hub pays W250 (scam) directly; its other address has no pairs.
		{"hubex", "hubex", `{"entity_id":"hubex","entity_name":"Hub Exchange","entity_type":"cex","risk_level":"high",` +
			`"max_score":75,"max_score_backward":0,"max_score_forward":75,"greatest_risk_category":"scam",` +
			`"greatest_risk_category_backward":null,"greatest_risk_category_forward":"scam",` +
			`"highest_risk_address":"` + w.h + `","risky_addresses":1,"risky_addresses_backward":0,"risky_addresses_forward":1,"seed_addresses":0,` +
			riskScores(0, 0, 0, 75) + `,"top_seed_addresses":[],` +
			`"top_sources":[{"seed_address":"` + w.w[249] + `","risk_category":"scam","direction":"forward","hop_distance":1,"contribution_usd":2.5}],` + riskNowJSON + `}`},
		// The caller's user entity holds F1 (given twice, in two cases; an invalid one left out).
		{"user", "5A1E0C3D-2B4F-4E6A-8C9D-0F1E2D3C4B5A", `{"entity_id":"5a1e0c3d-2b4f-4e6a-8c9d-0f1e2d3c4b5a","entity_name":"mine","entity_type":"user","risk_level":"high",` +
			`"max_score":75,"max_score_backward":0,"max_score_forward":75,"greatest_risk_category":"sanctions",` +
			`"greatest_risk_category_backward":null,"greatest_risk_category_forward":"sanctions",` +
			`"highest_risk_address":"` + w.f1 + `","risky_addresses":1,"risky_addresses_backward":0,"risky_addresses_forward":1,"seed_addresses":0,` +
			riskScores(75, 0, 0, 0) + `,"top_seed_addresses":[],` +
			`"top_sources":[{"seed_address":"` + w.s + `","risk_category":"sanctions","direction":"forward","hop_distance":1,"contribution_usd":40}],` + riskNowJSON + `}`},
	}
	for _, c := range cases {
		code, body := api.do(t, "GET", "/risk/entity/"+c.id, "", caller)
		if code != 200 || compact(body) != c.want {
			t.Errorf("%s: %d\n got %s\nwant %s", c.name, code, compact(body), c.want)
		}
	}
}

// A hub (more than RiskHubTransfers transfers) is reached but not gone past: with H a hub, X no
// longer reaches W250 (scam) through it, while H, scored itself, still does.
func TestRiskHubIsNotGonePast(t *testing.T) {
	w := newRiskWorld(t)
	if _, err := pgtest.Pool(t).Exec(context.Background(), `INSERT INTO intel.address_activity (chain_type, address, volume_usd, transfer_count, first_ms, last_ms)
		VALUES ('evm', $1, 1e9, $2, 0, 0)`, w.h, app.RiskHubTransfers+1); err != nil {
		t.Fatal(err)
	}
	api := newTestAPI(t, nil, nil)
	for _, c := range []struct{ name, addr, want string }{
		{"X past the hub", w.x, `"scam_score":0,`},
		{"the hub itself", w.h, `"scam_score":75,`},
	} {
		code, body := api.do(t, "GET", "/risk/address/"+c.addr, "", nil)
		if code != 200 || !strings.Contains(compact(body), c.want) {
			t.Errorf("%s: %d %s, want %s", c.name, code, compact(body), c.want)
		}
	}
}

// An operator id in another case is another, unknown id, whatever its place in the batch.
func TestRiskEntityBatchCase(t *testing.T) {
	newRiskWorld(t)
	api := newTestAPI(t, nil, nil)
	for _, body := range []string{`{"entity_ids":["tornado","TORNADO"]}`, `{"entity_ids":["TORNADO","tornado"]}`} {
		r := api.send(t, "POST", "/risk/entity/batch", body, nil)
		if r.Code != 404 || compact(r.Body.String()) != `{"error":"unknown entity \"TORNADO\""}` {
			t.Errorf("%s: %d %s", body, r.Code, r.Body)
		}
	}
}

// overlapStore counts the risk searches in flight at once: each hop's read waits a little, so
// searches an entity runs one after another never overlap.
type overlapStore struct {
	app.Store
	mu       sync.Mutex
	now, max int
}

func (o *overlapStore) RiskHops(ctx context.Context, chainType, root string, backward, forward []string, limit int, hubTransfers int64) ([]store.RiskEdge, []store.RiskEdge, error) {
	o.mu.Lock()
	o.now++
	o.max = max(o.max, o.now)
	o.mu.Unlock()
	time.Sleep(50 * time.Millisecond)
	defer func() {
		o.mu.Lock()
		o.now--
		o.mu.Unlock()
	}()
	return o.Store.RiskHops(ctx, chainType, root, backward, forward, limit, hubTransfers)
}

// An entity's addresses are scored at once, up to RiskParallel, with the same answer as one
// after another.
func TestRiskEntityScoresAddressesAtOnce(t *testing.T) {
	newRiskWorld(t)
	caller := &httpx.Identity{KeyID: "k1", UserID: "u1", Role: httpx.RoleIndividual, Tier: "api"}
	api := newTestAPI(t, nil, nil)
	api.app.Now = func() time.Time { return riskNow }
	code, one := api.do(t, "GET", "/risk/entity/hubex", "", caller)
	if code != 200 {
		t.Fatalf("one after another: %d %s", code, one)
	}
	o := &overlapStore{Store: api.app.Store}
	api.app.Store, api.app.RiskParallel = o, 4
	code, body := api.do(t, "GET", "/risk/entity/hubex", "", caller)
	if code != 200 || body != one {
		t.Fatalf("at once: %d\n got %s\nwant %s", code, body, one)
	}
	if o.max != 2 {
		t.Fatalf("%d searches at once, want hubex's 2 addresses", o.max)
	}
}
