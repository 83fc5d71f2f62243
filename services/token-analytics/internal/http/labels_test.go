package http

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	userlabels "github.com/chainintel/chainintel/services/user-labels"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

const labelsSecret = "token-analytics-test-internal-secret"

// Callers: alice labels user1 and puts user1 and user2 in her entity; bob labels the pool.
var (
	alice = httpx.Identity{KeyID: "k-alice", UserID: "u-alice", Role: httpx.RoleIndividual, Tier: "api"}
	bob   = httpx.Identity{KeyID: "k-bob", UserID: "u-bob", Role: httpx.RoleIndividual, Tier: "api"}
)

// startUserLabels runs the real user-labels service on the test database and returns its URL.
func startUserLabels(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	broker, err := eventbus.StartEmbeddedBroker(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := eventbus.EnsureTopics(ctx, broker.Addrs(), eventbus.Security{}, 1, []eventbus.TopicSpec{{Name: "user.changes.v1", Partitions: 1}}); err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ops, _ := net.Listen("tcp", "127.0.0.1:0")
	var uc userlabels.Config
	uc.Base = service.Base{InternalSecret: labelsSecret, ShutdownTimeout: 5 * time.Second, LogLevel: "error"}
	uc.Postgres = service.Postgres{DatabaseURL: pgtest.URL(t), MaxConns: 4}
	uc.Kafka = service.Kafka{Brokers: broker.Addrs(), Partitions: 1, ReplicationFactor: 1}
	uc.OutboxPollInterval, uc.OutboxRetention = time.Second, time.Hour
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = userlabels.Run(ctx, uc, service.Deps{Logger: slog.New(slog.DiscardHandler), HTTPListener: ln, OpsListener: ops})
	}()
	t.Cleanup(func() { cancel(); <-done; broker.Close() })
	url := "http://" + ln.Addr().String()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url + "/internal/shared/entities/00000000-0000-0000-0000-000000000000")
		if err == nil {
			resp.Body.Close()
			return url
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// asCaller sends a request to url signed for who and decodes a 2xx answer into out.
func asCaller(t *testing.T, who httpx.Identity, method, url string, body, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	httpx.NewSigner(labelsSecret).Sign(req.Header, who, time.Now())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatal(err)
		}
	}
}

// top_flow shows each caller's own labels and entities of its addresses, and only to that caller:
// alice sees hers, bob his, an unsigned request neither (whole bodies).
func TestTopFlowCallerLabels(t *testing.T) {
	e := knownWorld(t)
	ul := startUserLabels(t)
	asCaller(t, alice, "POST", ul+"/user/labels", []map[string]string{{"name": "my hot wallet", "note": "", "address": user1, "chainType": "evm"}}, nil)
	var created []ulclient.UserEntity
	asCaller(t, alice, "POST", ul+"/user/entities", map[string]any{"name": "My desk", "note": "mine",
		"addresses": map[string][]string{"evm": {user1, user2}}}, &created)
	asCaller(t, bob, "POST", ul+"/user/labels", []map[string]string{{"name": "bob's pool", "note": "", "address": pool, "chainType": "evm"}}, nil)

	client, err := ulclient.New(ul, httpx.NewSigner(labelsSecret), nil)
	if err != nil {
		t.Fatal(err)
	}
	set, _ := chains.NewSet(nil)
	r := httpx.NewEngine(httpx.EngineOptions{Service: "token-analytics"})
	r.Use(httpx.IdentityMiddleware(httpx.NewSigner(labelsSecret)))
	Register(r, app.New(e.store, app.Options{Now: func() time.Time { return now }, UserLabels: client}), set)
	get := func(who *httpx.Identity) string {
		req := httptest.NewRequest(http.MethodGet, "/token/top_flow/alpha?timeLast=24h&limit=3", nil)
		if who != nil {
			httpx.NewSigner(labelsSecret).Sign(req.Header, *who, time.Now())
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Fatalf("top_flow: %d %s", w.Code, w.Body)
		}
		return w.Body.String()
	}
	cexAddr := `{"address":"` + cex + `","chain":"ethereum","serviceEntity":{"id":"cex-c1","name":"CEX c1","note":"","type":"cex","service":null},
		"contract":false,"isUserAddress":false},"inUSD":100,"inValue":100,"outUSD":30,"outValue":30}`
	sameJSON(t, "alice", get(&alice), `[
		{"address":{"address":"`+user1+`","chain":"ethereum",
		  "userEntity":{"id":"`+created[0].ID+`","name":"My desk","note":"mine","type":"user","service":null},
		  "userLabel":{"name":"my hot wallet","address":"`+user1+`","chainType":"evm"},
		  "contract":false,"isUserAddress":true},"inUSD":40,"inValue":40,"outUSD":155,"outValue":155},
		{"address":`+cexAddr+`,
		{"address":{"address":"`+pool+`","chain":"ethereum","contract":false,"isUserAddress":false},"inUSD":50,"inValue":50,"outUSD":10,"outValue":10}]`)
	sameJSON(t, "bob", get(&bob), `[
		{"address":{"address":"`+user1+`","chain":"ethereum","contract":false,"isUserAddress":false},"inUSD":40,"inValue":40,"outUSD":155,"outValue":155},
		{"address":`+cexAddr+`,
		{"address":{"address":"`+pool+`","chain":"ethereum","userLabel":{"name":"bob's pool","address":"`+pool+`","chainType":"evm"},
		  "contract":false,"isUserAddress":false},"inUSD":50,"inValue":50,"outUSD":10,"outValue":10}]`)
	sameJSON(t, "no caller", get(nil), `[
		{"address":{"address":"`+user1+`","chain":"ethereum","contract":false,"isUserAddress":false},"inUSD":40,"inValue":40,"outUSD":155,"outValue":155},
		{"address":`+cexAddr+`,
		{"address":{"address":"`+pool+`","chain":"ethereum","contract":false,"isUserAddress":false},"inUSD":50,"inValue":50,"outUSD":10,"outValue":10}]`)
}
