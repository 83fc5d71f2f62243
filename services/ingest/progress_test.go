package ingest_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/promscrape"
	ingest "github.com/chainintel/chainintel/services/ingest"
	"github.com/chainintel/chainintel/services/ingest/internal/chaintest"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// TestBackfillProgressReachesHead backfills a geth --dev chain from block 0 and reads the
// progress gauges on the ops port's /metrics until the indexer is zero blocks behind a head
// that was already past block 8 when it started: progress_done (the cursor) passes that head,
// progress_total is the confirmed head, progress_remaining and ingest_head_lag_blocks reach 0,
// the ETA is 0 and the block counter counts every block from 0.
func TestBackfillProgressReachesHead(t *testing.T) {
	url := startGeth(t)
	rc, err := rpc.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var head0 uint64
	for head0 < 8 { // geth --dev.period 1 seals a block a second, empty or not
		var h string
		if err := rc.Call(&h, "eth_blockNumber"); err != nil {
			t.Fatal(err)
		}
		if head0, err = hexutil.DecodeUint64(h); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	brokers := kafkatest.Broker(t, chaintest.Topics...)
	cfg := gethConfig(t, url, pgtest.URL(t), brokers)
	cfg.Base.OpsAddr = ""
	cfg.EVMBatchBlocks, cfg.EVMPollInterval, cfg.EVMMarketWait = 2, 100*time.Millisecond, 50*time.Millisecond
	cfg.EVMProgressInterval = 50 * time.Millisecond
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ops, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ingest.Run(ctx, cfg, ingest.Deps{Logger: chaintest.Quiet, OpsListener: ops}) }()
	defer func() {
		cancel()
		<-done
	}()

	chain := map[string]string{"task": "ingest", "chain": "ethereum"}
	metrics := "http://" + ops.Addr().String() + "/metrics"
	var seen []float64 // distinct progress_done values, in the order read
	deadline := time.Now().Add(2 * time.Minute)
	for {
		s, err := promscrape.Scrape(ctx, http.DefaultClient, metrics)
		if err == nil {
			d, okD := s.Value("progress_done", chain)
			rem, okR := s.Value("progress_remaining", chain)
			total, _ := s.Value("progress_total", chain)
			eta, _ := s.Value("progress_eta_seconds", chain)
			lag, okL := s.Value("ingest_head_lag_blocks", map[string]string{"chain": "ethereum"})
			blocks, _ := s.Value("ingest_blocks_total", map[string]string{"chain": "ethereum"})
			if okD && (len(seen) == 0 || seen[len(seen)-1] != d) {
				seen = append(seen, d)
			}
			if okD && okR && okL && d >= float64(head0) && rem == 0 && lag == 0 && eta == 0 && total >= d && blocks == d+1 {
				t.Logf("cursor went through %v; head %v, %v blocks ingested", seen, total, blocks)
				checkIngestDashboard(t, s)
				// Counters are exported from the start (at 0), so increase() in
				// ChainintelIngestReorgBurst sees the first; the dev node may itself reorg, so
				// only the series' presence is checked here (TestCountersStartAtZero checks 0).
				if _, ok := s.Value("ingest_reorgs_total", map[string]string{"chain": "ethereum"}); !ok {
					t.Errorf("ingest_reorgs_total{chain=ethereum} not exported")
				}
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("ingest stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not caught up with head %d within 2 minutes; progress_done went through %v (scrape error %v)", head0, seen, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkIngestDashboard checks that the ingest dashboard's own metrics (not the shared HTTP and
// consumer ones, which e2e TestDashboardMetricsExist checks) are exported by an EVM ingester.
func checkIngestDashboard(t *testing.T, s promscrape.Samples) {
	b, err := os.ReadFile("../../charts/chainintel/dashboards/ingest.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string } `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	have := s.Names()
	var checked []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			var own []string
			for _, m := range promscrape.MetricNames(tg.Expr) {
				// The shared metrics are checked in e2e.
				if !strings.HasPrefix(m, "ingest_") && !strings.HasPrefix(m, "progress_") {
					continue
				}
				own = append(own, m)
				checked = append(checked, m)
				if !have[m] {
					t.Errorf("ingest dashboard names %s, which an EVM ingester does not export", m)
				}
			}
			for _, l := range promscrape.LabelNames(tg.Expr) {
				// job and namespace are target labels Prometheus adds at scrape time.
				if len(own) > 0 && l != "job" && l != "namespace" && !s.HasLabel(own, l) {
					t.Errorf("ingest dashboard: %s uses label %q, which none of %v carries", tg.Expr, l, own)
				}
			}
		}
	}
	t.Logf("ingest dashboard metrics checked: %v", checked)
}
