package http_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/service"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	intelligence "github.com/chainintel/chainintel/services/intelligence"
	intelclient "github.com/chainintel/chainintel/services/intelligence/client"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	svchttp "github.com/chainintel/chainintel/services/transfers/internal/http"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
	"github.com/gin-gonic/gin"
)

// The known world's tags, as an operator curates them in intelligence: both hot wallets are
// "hot", the customer U1 is "kyc", and coinbase's deposit address D3 is "bridge" on base only
// (a tag of one chain).
const worldTags = `{"entities":[{"id":"binance","name":"Binance","type":"cex"},{"id":"coinbase","name":"Coinbase","type":"cex"}],
  "addresses":[
    {"chainType":"evm","address":"` + tw.H1 + `","entity":"binance","tags":[{"id":"hot","params":""}]},
    {"chainType":"evm","address":"` + tw.H2 + `","entity":"coinbase","tags":[{"id":"hot","params":""}]},
    {"chainType":"evm","address":"` + tw.U1 + `","tags":[{"id":"kyc","params":"tier 2"}]},
    {"chainType":"evm","address":"` + tw.D3 + `","entity":"coinbase","tags":[{"id":"bridge","params":""}]}],
  "tags":[{"id":"hot","label":"Hot wallet","rank":1},{"id":"kyc","label":"KYC {param}","rank":2},
    {"id":"bridge","label":"Bridge","rank":3,"chain":"base"}]}`

var (
	intelOnce sync.Once
	intelURL  string
	intelErr  error
)

// startIntelligence runs the real intelligence service in-process on the package's database
// (its own schema) and an embedded broker, with the world's tags imported, and returns its URL.
func startIntelligence(t *testing.T) string {
	t.Helper()
	e := world(t)
	intelOnce.Do(func() {
		ctx := context.Background()
		broker, err := eventbus.StartEmbeddedBroker(0)
		if err != nil {
			intelErr = err
			return
		}
		var topics []eventbus.TopicSpec
		for _, name := range []string{eventsv1.TopicAttributions, eventsv1.TopicTransfers, eventsv1.TopicReorgs, eventsv1.TopicTransactions,
			eventsv1.TopicContracts, eventsv1.TopicTokens, eventsv1.TopicBalances, eventsv1.TopicMarketTokens, eventsv1.TopicPrices} {
			topics = append(topics, eventbus.TopicSpec{Name: name, Partitions: 1})
		}
		if intelErr = eventbus.EnsureTopics(ctx, broker.Addrs(), eventbus.Security{}, 1, topics); intelErr != nil {
			return
		}
		var cfg intelligence.Config
		cfg.Base = service.Base{InternalSecret: secret, ShutdownTimeout: 5 * time.Second, LogLevel: "error"}
		cfg.Postgres = service.Postgres{DatabaseURL: pgtest.URL(t), MaxConns: 4}
		cfg.Kafka = service.Kafka{Brokers: broker.Addrs(), Partitions: 1, ReplicationFactor: 1}
		cfg.UserLabelsURL, cfg.TransfersURL = e.ulURL, "http://127.0.0.1:1"
		cfg.CacheRefresh, cfg.PublishInterval, cfg.HeuristicsInterval = 100*time.Millisecond, time.Second, time.Hour
		cfg.ExchangeTypes, cfg.DepositMinSenders, cfg.DepositSweepShare = []string{"cex"}, 1, 0.8
		if intelErr = intelligence.Migrate(ctx, cfg, slog.New(slog.DiscardHandler)); intelErr != nil {
			return
		}
		if _, intelErr = intelligence.ImportCurated(ctx, cfg, strings.NewReader(worldTags)); intelErr != nil {
			return
		}
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		ops, _ := net.Listen("tcp", "127.0.0.1:0")
		go func() {
			_ = intelligence.Run(ctx, cfg, service.Deps{Logger: slog.New(slog.DiscardHandler), HTTPListener: ln, OpsListener: ops})
		}()
		intelURL = "http://" + ln.Addr().String()
		intelErr = waitHTTP(intelURL + "/intelligence/entity_types")
	})
	if intelErr != nil {
		t.Fatal(intelErr)
	}
	return intelURL
}

func waitHTTP(url string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tagsRouter is the world's router with its app asking intelligence at url for tags.
func tagsRouter(t *testing.T, url string) *gin.Engine {
	e := world(t)
	ic, err := intelclient.New(url, httpx.NewSigner(secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := chains.NewSet(nil)
	r := httpx.NewEngine(httpx.EngineOptions{Service: "transfers"})
	r.Use(httpx.IdentityMiddleware(httpx.NewSigner(secret)))
	svchttp.Register(r, app.New(e.store, e.render, cs, app.WithTags(ic)),
		query.Parser{Chains: cs, Now: func() time.Time { return tw.Now }})
	return r
}

// /counterparties' tags keeps the counterparties whose address carries one of the tags, as
// intelligence has them (a tag of one chain only there), the top limit of those by USD.
func TestCounterpartyTags(t *testing.T) {
	e := world(t)
	withTags := &env{router: tagsRouter(t, startIntelligence(t))}
	u1 := `{"address":"` + tw.U1 + `","chain":"ethereum","contract":false,"isUserAddress":false}`
	h2 := `{"address":"` + tw.H2 + `","chain":"ethereum","serviceEntity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":null},"serviceLabel":{"name":"Hot Wallet","address":"` + tw.H2 + `","chainType":"evm"},"contract":false,"isUserAddress":false}`
	h1 := `{"address":"` + tw.H1 + `","chain":"ethereum","serviceEntity":{"id":"binance","name":"Binance","note":"","type":"cex","service":null,"website":"https://binance.com"},"serviceLabel":{"name":"Hot Wallet 1","address":"` + tw.H1 + `","chainType":"evm"},"contract":false,"isUserAddress":false}`
	d3 := `{"address":"` + tw.D3 + `","chain":"base","serviceEntity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":null},"serviceLabel":{"name":"Deposit","address":"` + tw.D3 + `","chainType":"evm"},"depositServiceID":"coinbase","contract":false,"isUserAddress":false}`
	for path, want := range map[string]string{
		// binance's counterparties: H2 (20000, out), U2 (4000, out), U1 (1000, in).
		"/counterparties/entity/binance?tags=hot": `{"ethereum":[{"address":` + h2 + `,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":20000}]}`,
		"/counterparties/entity/binance?tags=kyc,hot": `{"ethereum":[
		  {"address":` + h2 + `,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":20000},
		  {"address":` + u1 + `,"chains":["ethereum"],"flow":"in","transactionCount":1,"usd":1000}]}`,
		"/counterparties/entity/binance?tags=kyc&tags=hot&limit=1": `{"ethereum":[{"address":` + h2 + `,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":20000}]}`,
		"/counterparties/entity/binance?tags=kyc&limit=1":          `{"ethereum":[{"address":` + u1 + `,"chains":["ethereum"],"flow":"in","transactionCount":1,"usd":1000}]}`,
		"/counterparties/entity/binance?tags=hot&flow=in":          `{}`,
		"/counterparties/entity/binance?tags=nosuch":               `{}`,
		// U2's: D3 (base, 500), U1 (base, 0), H1 (ethereum, 4000). bridge is a tag on base only.
		"/counterparties/address/" + tw.U2 + "?tags=bridge":          `{"base":[{"address":` + d3 + `,"chains":["base"],"flow":"out","transactionCount":1,"usd":500}]}`,
		"/counterparties/address/" + tw.U2 + "?tags=hot,bridge":      `{"base":[{"address":` + d3 + `,"chains":["base"],"flow":"out","transactionCount":1,"usd":500}],"ethereum":[{"address":` + h1 + `,"chains":["ethereum"],"flow":"in","transactionCount":1,"usd":4000}]}`,
		"/counterparties/address/" + tw.U2 + "?tags=kyc&chains=base": `{"base":[{"address":{"address":"` + tw.U1 + `","chain":"base","contract":false,"isUserAddress":false},"chains":["base"],"flow":"in","transactionCount":1,"usd":0}]}`,
		// An unknown parameter beside tags is ignored, as everywhere.
		"/counterparties/entity/binance?tags=hot&sortKey=usd": `{"ethereum":[{"address":` + h2 + `,"chains":["ethereum"],"flow":"out","transactionCount":1,"usd":20000}]}`,
	} {
		t.Run(path, func(t *testing.T) { sameJSON(t, withTags.get(t, &bob, path), http.StatusOK, want) })
	}
	// No tags: the same answer as without intelligence.
	sameJSON(t, withTags.get(t, &bob, "/counterparties/entity/binance"), http.StatusOK, string(e.get(t, &bob, "/counterparties/entity/binance").body))
	// Without intelligence configured tags is a 400 naming it; intelligence down is a 503.
	sameJSON(t, e.get(t, &bob, "/counterparties/entity/binance?tags=hot"), http.StatusBadRequest,
		`{"error":"tags: needs the intelligence service, which this deployment does not configure"}`)
	down := &env{router: tagsRouter(t, "http://127.0.0.1:1")}
	r := down.get(t, &bob, "/counterparties/entity/binance?tags=hot")
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("intelligence down: %d %s, want 503", r.status, r.body)
	}
	many := make([]string, 51)
	for i := range many {
		many[i] = fmt.Sprintf("t%d", i)
	}
	sameJSON(t, withTags.get(t, &bob, "/counterparties/entity/binance?tags="+strings.Join(many, ",")), http.StatusBadRequest,
		`{"error":"tags: at most 50, got 51"}`)
}
