package edge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge"
)

type endpointCalls struct {
	Period     string `json:"period"`
	StartTime  string `json:"startTime"`
	EndTime    string `json:"endTime"`
	DataPoints []struct {
		Hour            string           `json:"hour"`
		TotalCalls      int64            `json:"totalCalls"`
		TotalCredits    int64            `json:"totalCredits"`
		CallBreakdown   map[string]int64 `json:"callBreakdown"`
		CreditBreakdown map[string]int64 `json:"creditBreakdown"`
	} `json:"dataPoints"`
	EndpointInfos []struct {
		Pattern  string `json:"pattern"`
		Weight   int64  `json:"weight"`
		UnitType string `json:"unitType"`
	} `json:"endpointInfos"`
}

type creditPeriod struct {
	PeriodStart     string `json:"periodStart"`
	PeriodEnd       string `json:"periodEnd"`
	CreditsIncluded int64  `json:"creditsIncluded"`
	CreditsUsed     int64  `json:"creditsUsed"`
	ExtraCredits    int64  `json:"extraCredits"`
	EntityID        string `json:"entityId"`
	EntityType      string `json:"entityType"`
	Status          string `json:"status"`
	ComputedAt      string `json:"computedAt"`
}

func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.Body), &v); err != nil {
		t.Fatalf("%d %s: %v", r.Status, r.Body, err)
	}
	return v
}

// The credits of a mixed workload equal the weight table, call by call in the headers and in
// total in the rollups; failed calls cost nothing; the analytics endpoints return the figures.
func TestCreditsOfMixedWorkloadAndAnalytics(t *testing.T) {
	e := newEdge(t, edgeOpts{})
	admin, k := e.key(t, edge.KeySpec{Tier: "api", Role: httpx.RoleOrgAdmin})
	member, _ := e.key(t, edge.KeySpec{Tier: "api", Role: httpx.RoleOrgMember, OrgID: k.OrgID})
	api, _ := e.Tiers.Get("api")

	calls := []struct {
		key, path string
		status    int
		credits   int64
		pattern   string
	}{
		{admin, "/intelligence/address/0xabc", 200, 1, "/intelligence/address/{address}"},
		{admin, "/intelligence/address/0xabc/all", 200, 2, "/intelligence/address/{address}/all"},
		{admin, "/balances/entity/binance", 200, 5, "/balances/entity/{entity}"},
		{admin, "/transfers?rows=7", 200, 14, "/transfers"},
		{member, "/swaps?rows=0", 200, 0, "/swaps"},
		{member, "/tx/0x01", 200, 2, "/tx/{hash}"},
		{member, "/token/holders/ethereum/0xdead", 200, 30, "/token/holders/{chain}/{address}"},
		{member, "/token/holders/ethereum", 200, 30, "/token/holders/{pricingId}"},
		{admin, "/tx/0x02?status=404", 404, 0, "/tx/{hash}"},
		{admin, "/flow/entity/x?status=500", 500, 0, "/flow/entity/{entity}"},
		{admin, "/chains", 200, 0, "/chains"},
		{member, "/user/labels", 200, 1, "/user/labels"},
	}
	wantCalls, wantCredits := map[string]int64{}, map[string]int64{}
	var total int64
	for _, c := range calls {
		r := e.get(c.path, c.key)
		if r.Status != c.status {
			t.Fatalf("%s: %d %s", c.path, r.Status, r.Body)
		}
		total += c.credits
		if got := r.Header.Get("X-Credits-Used"); got != strconv.FormatInt(c.credits, 10) {
			t.Errorf("%s: X-Credits-Used %s, want %d", c.path, got, c.credits)
		}
		if got := r.Header.Get("X-Credits-Period-Used"); got != strconv.FormatInt(total, 10) {
			t.Errorf("%s: X-Credits-Period-Used %s, want %d", c.path, got, total)
		}
		if got := r.Header.Get("X-Credits-Period-Limit"); got != strconv.FormatInt(api.IncludedCredits, 10) {
			t.Errorf("%s: X-Credits-Period-Limit %s", c.path, got)
		}
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
			if r.Header.Get(h) == "" {
				t.Errorf("%s: no %s", c.path, h)
			}
		}
		if r.Header.Get(httpx.HeaderRows) != "" {
			t.Errorf("%s: %s leaked to the client", c.path, httpx.HeaderRows)
		}
		wantCalls[c.pattern]++
		wantCredits[c.pattern] += c.credits
	}

	// The org's figures, as the admin and as the member see them (org scope for both).
	var ec endpointCalls
	eventually(t, 30*time.Second, func() error {
		ec = decode[endpointCalls](t, e.get("/analytics/endpoint-calls", member))
		// Everything happened within the last hour or two: fold the data points.
		gotCalls, gotCredits := map[string]int64{}, map[string]int64{}
		var gotTotal int64
		for _, dp := range ec.DataPoints {
			for p, n := range dp.CallBreakdown {
				gotCalls[p] += n
			}
			for p, n := range dp.CreditBreakdown {
				gotCredits[p] += n
			}
			gotTotal += dp.TotalCredits
		}
		// The analytics calls themselves are metered calls (0 credits).
		delete(gotCalls, "/analytics/endpoint-calls")
		delete(gotCredits, "/analytics/endpoint-calls")
		if !reflect.DeepEqual(gotCalls, wantCalls) || !reflect.DeepEqual(gotCredits, wantCredits) || gotTotal != total {
			return fmt.Errorf("rollups:\ncalls   %v\nwant    %v\ncredits %v\nwant    %v\ntotal %d want %d", gotCalls, wantCalls, gotCredits, wantCredits, gotTotal, total)
		}
		return nil
	})
	if ec.Period != "24h" {
		t.Errorf("period %q", ec.Period)
	}
	for _, info := range ec.EndpointInfos {
		if info.Pattern == "/transfers" && (info.Weight != 2 || info.UnitType != "row") {
			t.Errorf("endpointInfo %+v", info)
		}
		if info.Pattern == "/tx/{hash}" && (info.Weight != 2 || info.UnitType != "call") {
			t.Errorf("endpointInfo %+v", info)
		}
	}

	// Credit periods: the org admin sees the org's current period; the member gets 403.
	eventually(t, time.Minute, func() error {
		ps := decode[[]creditPeriod](t, e.get("/analytics/credit-periods", admin))
		if len(ps) != 1 || ps[0].CreditsUsed != total {
			return fmt.Errorf("periods %+v, want one with %d used", ps, total)
		}
		p := ps[0]
		now := time.Now().UTC()
		wantStart := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		if p.PeriodStart != wantStart.Format(time.RFC3339) || p.PeriodEnd != wantStart.AddDate(0, 1, 0).Format(time.RFC3339) ||
			p.CreditsIncluded != api.IncludedCredits || p.ExtraCredits != 0 || p.EntityID != k.OrgID || p.EntityType != "org" || p.Status != "open" {
			return fmt.Errorf("period %+v", p)
		}
		return nil
	})
	r := e.get("/analytics/credit-periods", member)
	if r.Status != 403 || r.Body != `{"error":"credit periods are visible to org admins only"}`+"\n" {
		t.Fatalf("member on credit periods: %d %s", r.Status, r.Body)
	}
}

// An individual sees only their own figures; another org's calls never show.
func TestAnalyticsScoping(t *testing.T) {
	e := newEdge(t, edgeOpts{})
	solo, sk := e.key(t, edge.KeySpec{Tier: "pro", Role: httpx.RoleIndividual})
	other, _ := e.key(t, edge.KeySpec{Tier: "pro", Role: httpx.RoleOrgAdmin})
	for i := 0; i < 3; i++ {
		e.get("/intelligence/entity/binance", solo)
	}
	e.get("/balances/entity/binance", other)
	eventually(t, 30*time.Second, func() error {
		ec := decode[endpointCalls](t, e.get("/analytics/endpoint-calls?period=7d", solo))
		if ec.Period != "7d" || len(ec.DataPoints) == 0 {
			return fmt.Errorf("%+v", ec)
		}
		var calls, credits int64
		for _, dp := range ec.DataPoints {
			if dp.CallBreakdown["/balances/entity/{entity}"] != 0 {
				t.Fatalf("another org's calls visible: %+v", dp)
			}
			calls += dp.CallBreakdown["/intelligence/entity/{entity}"]
			credits += dp.CreditBreakdown["/intelligence/entity/{entity}"]
		}
		if calls != 3 || credits != 3 {
			return fmt.Errorf("calls %d credits %d", calls, credits)
		}
		return nil
	})
	ps := decode[[]creditPeriod](t, e.get("/analytics/credit-periods", solo))
	pro, _ := e.Tiers.Get("pro")
	if len(ps) != 1 || ps[0].EntityType != "user" || ps[0].EntityID != sk.UserID || ps[0].CreditsUsed != 3 || ps[0].CreditsIncluded != pro.IncludedCredits {
		t.Fatalf("individual's periods: %+v", ps)
	}
}

// A tier without overage is refused with 429 "credit limit reached" on credited routes once the
// period's credits are spent; free routes still answer.
func TestCreditLimitWithoutOverage(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "tiers.yaml")
	if err := os.WriteFile(table, []byte(`
tiers:
  - {name: tiny, rate: 50, burst: 50, heavyRate: 1, includedCredits: 10, overage: false}
  - {name: roomy, rate: 50, burst: 50, heavyRate: 1, includedCredits: 10, overage: true}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEdge(t, edgeOpts{noConsume: true, tune: func(c *edge.Config) { c.TiersFile = table }})
	tiny, _ := e.key(t, edge.KeySpec{Tier: "tiny"})
	roomy, _ := e.key(t, edge.KeySpec{Tier: "roomy"})
	for i := 0; i < 2; i++ {
		if r := e.get("/balances/entity/x", tiny); r.Status != 200 {
			t.Fatalf("call %d: %d %s", i, r.Status, r.Body)
		}
	}
	r := e.get("/balances/entity/x", tiny)
	if r.Status != 429 || r.Body != `{"error":"credit limit reached"}`+"\n" || r.Header.Get("Retry-After") == "" ||
		r.Header.Get("X-Credits-Period-Used") != "10" || r.Header.Get("X-Credits-Period-Limit") != "10" {
		t.Fatalf("over the limit: %d %v %s", r.Status, r.Header, r.Body)
	}
	if r := e.get("/chains", tiny); r.Status != 200 {
		t.Fatalf("free route over the limit: %d %s", r.Status, r.Body)
	}
	// With overage the calls go on and count as extra credits.
	for i := 0; i < 3; i++ {
		if r := e.get("/balances/entity/x", roomy); r.Status != 200 {
			t.Fatalf("overage call %d: %d %s", i, r.Status, r.Body)
		}
	}
	if r := e.get("/balances/entity/x", roomy); r.Header.Get("X-Credits-Period-Used") != "20" {
		t.Fatalf("overage period used: %v", r.Header)
	}
}

// /transfers/histogram is for the API tier only.
func TestHistogramNeedsAPITier(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true})
	basic, _ := e.key(t, edge.KeySpec{Tier: "basic"})
	api, _ := e.key(t, edge.KeySpec{Tier: "api"})
	r := e.get("/transfers/histogram", basic)
	if r.Status != 403 || r.Body != `{"error":"/transfers/histogram needs the API tier; the basic tier does not include it"}`+"\n" {
		t.Fatalf("basic: %d %s", r.Status, r.Body)
	}
	if r := e.get("/transfers/histogram", api); r.Status != 200 || r.Header.Get("X-Credits-Used") != "4" {
		t.Fatalf("api: %d %v %s", r.Status, r.Header, r.Body)
	}
	// The public simple histogram needs no key and is limited per IP.
	if r := e.get("/transfers/histogram/simple", ""); r.Status != 200 || r.Header.Get("X-RateLimit-Limit") == "" {
		t.Fatalf("simple: %d %v", r.Status, r.Header)
	}
}

// A usage event delivered twice (same event id) is counted once.
func TestReplayedUsageEventCountedOnce(t *testing.T) {
	e := newEdge(t, edgeOpts{})
	raw, k := e.key(t, edge.KeySpec{Tier: "api", Role: httpx.RoleIndividual})
	pub := eventbus.NewPublisher(e.brokers, eventbus.PublisherOptions{})
	defer pub.Close()
	call := &eventsv1.UsageCall{KeyId: k.ID, UserId: k.UserID, Route: "/ws/transfers", Method: "GET", Status: 101,
		Credits: 25, Rows: 25, TimeMs: time.Now().UnixMilli(), Unit: "row", Tier: "api"}
	ev := eventbus.Event{Topic: eventsv1.TopicUsageCalls, Key: k.ID, Msg: call, ID: "replayed-event-1"}
	ctx := context.Background()
	if err := pub.Publish(ctx, ev, ev); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(ctx, ev); err != nil {
		t.Fatal(err)
	}
	// A distinct event after the replays: once it is counted, the replays have been seen.
	marker := eventbus.Event{Topic: eventsv1.TopicUsageCalls, Key: k.ID, ID: "replayed-event-2", Msg: &eventsv1.UsageCall{
		KeyId: k.ID, UserId: k.UserID, Route: "/tx/{hash}", Method: "GET", Status: 200, Credits: 2, TimeMs: time.Now().UnixMilli(), Unit: "call", Tier: "api"}}
	if err := pub.Publish(ctx, marker); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		ec := decode[endpointCalls](t, e.get("/analytics/endpoint-calls", raw))
		var ws, tx, credits int64
		for _, dp := range ec.DataPoints {
			ws += dp.CallBreakdown["/ws/transfers"]
			tx += dp.CallBreakdown["/tx/{hash}"]
			credits += dp.CreditBreakdown["/ws/transfers"]
		}
		if tx != 1 {
			return fmt.Errorf("marker not counted yet: %+v", ec)
		}
		if ws != 1 || credits != 25 {
			t.Fatalf("replayed event: %d calls, %d credits; want 1 and 25", ws, credits)
		}
		return nil
	})
	ps := decode[[]creditPeriod](t, e.get("/analytics/credit-periods", raw))
	if len(ps) != 1 || ps[0].CreditsUsed != 27 {
		t.Fatalf("periods %+v", ps)
	}
}
