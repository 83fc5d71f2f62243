package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// GET /networks/history/{chain} through the edge: a list of daily quotes of the native coin,
// each with its four public fields; an unknown chain is a 400 naming the parameter.
func TestNetworkHistoryThroughEdge(t *testing.T) {
	p := Get(t)
	var qs []struct {
		Time      *time.Time `json:"time"`
		USD       *float64   `json:"usd"`
		Volume24h *float64   `json:"volume24h"`
		MarketCap *float64   `json:"marketCap"`
	}
	r := p.Get(t, "/networks/history/ethereum")
	r.JSON(t, &qs)
	if r.Status != http.StatusOK || qs == nil {
		t.Fatalf("/networks/history/ethereum: %d %s", r.Status, r.Body)
	}
	for i, q := range qs {
		if q.Time == nil || q.USD == nil || q.Volume24h == nil || q.MarketCap == nil {
			t.Fatalf("quote %d lacks a field: %s", i, r.Body)
		}
		if i > 0 && !qs[i-1].Time.Before(*q.Time) {
			t.Fatalf("quotes not oldest first: %s", r.Body)
		}
	}
	r = p.Get(t, "/networks/history/nochain")
	if want := fmt.Sprintf("chain: unknown chain %q", "nochain"); r.Status != http.StatusBadRequest || r.Error() != want {
		t.Errorf("unknown chain: %d %s, want 400 %q", r.Status, r.Body, want)
	}
}

// GET /networks/status through the edge: the simulated ethereum chain has a tip that rises as
// blocks are ingested, a recent tip time, counted transfers and transactions, and the native
// coin's quote.
func TestNetworkStatusThroughEdge(t *testing.T) {
	p := Get(t)
	type status struct {
		Chain     string   `json:"chain"`
		Active    bool     `json:"active"`
		Price     float64  `json:"price"`
		MarketCap *float64 `json:"marketCap"`
		Tip       uint64   `json:"tip"`
		TPS       *float64 `json:"tps"`
		Transfers int64    `json:"transfers"`
		GasFee    *float64 `json:"gasFee"`
		AsOf      struct {
			Tip   time.Time  `json:"tip"`
			Price *time.Time `json:"price"`
		} `json:"asOf"`
	}
	read := func() (status, string) {
		var st map[string]status
		r := p.Get(t, "/networks/status?notAPublicParameter=1")
		r.JSON(t, &st)
		if r.Status != http.StatusOK {
			t.Fatalf("/networks/status: %d %s", r.Status, r.Body)
		}
		return st["ethereum"], string(r.Body)
	}
	var first status
	var body string
	deadline := time.Now().Add(60 * time.Second)
	for {
		first, body = read()
		if first.Tip > 0 && first.Transfers > 0 && first.Price > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if first.Chain != "ethereum" || first.Tip == 0 || first.Transfers == 0 || first.Price <= 0 || first.AsOf.Price == nil ||
		first.TPS == nil || first.MarketCap == nil || first.AsOf.Tip.IsZero() {
		t.Fatalf("ethereum status lacks figures: %s", body)
	}
	// The tip's advance gets its own minute, whatever the first figures took to appear.
	deadline = time.Now().Add(60 * time.Second)
	for {
		next, body := read()
		if next.Tip > first.Tip {
			if next.AsOf.Tip.Before(first.AsOf.Tip) {
				t.Fatalf("tip %d is older than tip %d: %s", next.Tip, first.Tip, body)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tip stayed at %d: %s", first.Tip, body)
		}
		time.Sleep(time.Second)
	}
}
