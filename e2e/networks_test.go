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
