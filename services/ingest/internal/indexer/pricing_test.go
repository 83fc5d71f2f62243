package indexer_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/libs/sharedtest"
	"github.com/chainintel/chainintel/services/ingest/internal/evm"
	"github.com/chainintel/chainintel/services/ingest/internal/market"
	tokenanalytics "github.com/chainintel/chainintel/services/token-analytics"
	taclient "github.com/chainintel/chainintel/services/token-analytics/client"
)

// priceGate stands in front of token-analytics: while closed it answers POST
// /internal/prices/window as the service does while its imports run (503, Retry-After); open,
// it forwards, counting each pricing id asked about.
type priceGate struct {
	mu     sync.Mutex
	closed bool
	asked  map[string]int
	proxy  *httputil.ReverseProxy
	served int
}

func (g *priceGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var b struct {
		IDs []string `json:"ids"`
	}
	_ = json.Unmarshal(body, &b)
	g.mu.Lock()
	closed := g.closed
	if !closed {
		g.served++
		for _, id := range b.IDs {
			g.asked[id]++
		}
	}
	g.mu.Unlock()
	if closed {
		w.Header().Set("Retry-After", "5")
		httpx.WriteError(w, http.StatusServiceUnavailable, "the token list and price imports are not finished; retry later")
		return
	}
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	r.ContentLength = int64(len(body))
	g.proxy.ServeHTTP(w, r)
}

// startTokenAnalytics runs the token-analytics service on the package's database with the
// shared ETH and USDC price CSVs as its configured imports, and returns its base URL.
func startTokenAnalytics(t *testing.T, brokers []string, csvs []string) string {
	t.Helper()
	var cfg tokenanalytics.Config
	if err := config.Defaults(&cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Base = service.Base{HTTPAddr: "127.0.0.1:0", OpsAddr: "127.0.0.1:0", LogLevel: "error", ShutdownTimeout: 10 * time.Second,
		InternalSecret: "pricing-test-internal-secret"}
	cfg.Postgres = service.Postgres{DatabaseURL: pgtest.URL(t), MaxConns: 4}
	cfg.Kafka = service.Kafka{Brokers: brokers, Partitions: 4, ReplicationFactor: 1}
	cfg.Chains, cfg.PriceCSVs, cfg.UserLabelsURL, cfg.PriceAPIURL = []string{"ethereum"}, csvs, "", ""
	ctx, cancel := context.WithCancel(context.Background())
	if err := tokenanalytics.Migrate(ctx, cfg, nil); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- tokenanalytics.Run(ctx, cfg, tokenanalytics.Deps{Logger: quiet, HTTPListener: ln}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("token-analytics stopped with %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// csvPrice is the price a CoinGecko export gives for a day.
func csvPrice(t *testing.T, path string, day time.Time) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	prefix := day.Format(time.DateOnly) + " 00:00:00 UTC,"
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), prefix); ok {
			p, err := strconv.ParseFloat(strings.Split(rest, ",")[0], 64)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("%s has no price for %s", path, day.Format(time.DateOnly))
	return 0
}

// A backfill of 2021 blocks after the broker lost market.prices.v1 (ingest's book holds the
// registry but no price): the indexer asks token-analytics, whose history holds the shared
// CSVs, for each day's prices. (b) While token-analytics answers that its imports run, the
// round is held: nothing is published and the cursor stays; once it answers, every transfer is
// published priced as the CSVs say for its block's day, the day after midnight too (the book's
// point of the day before, still in force there, is not taken for it). (c) Thirty blocks
// across two days, in ten rounds, cost one lookup per pricing id and day.
func TestBackfillPricedFromTokenAnalytics(t *testing.T) {
	ethCSV := sharedtest.Path(t, "data/prices/Smialku__eth-usd-max.csv")
	usdcCSV := sharedtest.Path(t, "data/prices/BrooksIan__usdc-usd-max.csv")
	day := time.Date(2021, 3, 1, 0, 0, 0, 0, time.UTC)
	bs := branch("priced", 30, nil, 0)
	for _, b := range bs { // blocks 1-14 on March 1st, 15-30 on the 2nd
		b.at = day.Add(24*time.Hour-3*time.Minute).Unix() + 12*int64(b.number)
	}
	sc := &scriptedChain{}
	sc.set(bs, 30)
	r := newRig(t, "ethereum", sc.handler())
	// Every EVM chain of the catalogue is some other test's too: neither sees what the other left.
	forgetChain(t, "ethereum")
	t.Cleanup(func() { forgetChain(t, "ethereum") })
	r.mk = market.New() // the broker lost the prices: the registry alone was republished
	r.mk.SetToken("ethereum", evm.Addr(tokenAddr), "usd-coin")

	brokers := kafkatest.Broker(t, tokenanalytics.Topics...)
	ta := startTokenAnalytics(t, brokers, []string{"ethereum=" + ethCSV, "usd-coin=" + usdcCSV})
	target, _ := url.Parse(ta)
	gate := &priceGate{closed: true, asked: map[string]int{}, proxy: httputil.NewSingleHostReverseProxy(target)}
	srv := httptest.NewServer(gate)
	defer srv.Close()
	tc, err := taclient.New(srv.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.mk.SetSource(tc)
	x := r.indexer(r.pub, 1)

	ctx := context.Background()
	if _, err := x.Step(ctx); !errors.Is(err, httpx.ErrUnavailable) || !strings.Contains(err.Error(), "imports are not finished") {
		t.Fatalf("round while token-analytics imports: %v, want it held as unavailable", err)
	}
	if cur, ok, err := r.st.Cursor(ctx, "ethereum"); err != nil || ok {
		t.Fatalf("cursor after a held round: %v %v %v", cur, ok, err)
	}
	gate.mu.Lock()
	gate.closed = false
	gate.mu.Unlock()
	chaintestWait(t, func() error { return r.mk.Ready(ctx) }) // the service's own imports at start
	drain(t, x)

	prices := map[string]map[time.Time]float64{"ethereum": {}, "usd-coin": {}}
	for _, d := range []time.Time{day, day.Add(24 * time.Hour)} {
		prices["ethereum"][d], prices["usd-coin"][d] = csvPrice(t, ethCSV, d), csvPrice(t, usdcCSV, d)
	}
	if prices["ethereum"][day] == prices["ethereum"][day.Add(24*time.Hour)] {
		t.Fatal("the two days' ETH prices are equal: the test could not tell them apart")
	}
	want := expect(bs, 30, nil)
	eventually(t, 20*time.Second, func() error {
		if err := check(r.sink, "ethereum", want); err != nil {
			return err
		}
		return checkPriced(r.sink, prices)
	})
	gate.mu.Lock()
	defer gate.mu.Unlock()
	if gate.asked["ethereum"] != 2 || gate.asked["usd-coin"] != 2 || len(gate.asked) != 2 {
		t.Errorf("lookups by pricing id %v (%d calls), want two each (one a day) for ethereum and usd-coin", gate.asked, gate.served)
	}
}

// chaintestWait retries f until it succeeds (token-analytics finishing its imports).
func chaintestWait(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("token-analytics never answered: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkPriced checks every published transfer's USD value: its amount at its block's day's CSV
// price (prices by pricing id and day).
func checkPriced(s *sink, prices map[string]map[time.Time]float64) error {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for id, tr := range s.Transfers {
		price := prices[tr.TokenId][time.UnixMilli(tr.BlockTimeMs).UTC().Truncate(24*time.Hour)]
		if price == 0 {
			return fmt.Errorf("transfer %s: no CSV price of %q on its block's day", id, tr.TokenId)
		}
		if tr.HistoricalUsd == nil {
			return fmt.Errorf("transfer %s (%s) has no USD value", id, tr.TokenId)
		}
		amt, _ := new(big.Float).SetString(tr.Amount)
		units, _ := amt.Float64()
		if want := units / 1e18 * price; math.Abs(*tr.HistoricalUsd-want) > 1e-9*math.Abs(want) {
			return fmt.Errorf("transfer %s (%s): %v USD, want %v (price %v)", id, tr.TokenId, *tr.HistoricalUsd, want, price)
		}
	}
	return nil
}

// forgetChain deletes what ingest's store holds of chain.
func forgetChain(t *testing.T, chain string) {
	t.Helper()
	for _, table := range []string{"cursors", "blocks", "rebalance", "tokens", "pools", "orphaned"} {
		if _, err := pgtest.Pool(t).Exec(context.Background(), "DELETE FROM ingest."+table+" WHERE chain = $1", chain); err != nil {
			t.Fatal(err)
		}
	}
}
