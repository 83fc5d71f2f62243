package indexer

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/ingest/internal/market"
)

// A transfer of a priced token without a price in force (the newest is older than MaxAge) is
// counted and reported once an hour per pricing id, not left silently without a USD value.
func TestUnpricedTransferIsReported(t *testing.T) {
	c, _ := chains.Lookup("ethereum")
	mk := market.New()
	head := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	mk.AddPrice("ethereum", time.Date(2025, 1, 14, 0, 0, 0, 0, time.UTC), 3134.55)
	var logs bytes.Buffer
	x := New(Config{Chain: c}, nil, nil, mk, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	x.now = func() time.Time { return head }
	for range 3 {
		tr := &eventsv1.Transfer{Amount: "1000000000000000000"}
		x.fillTransfer(tr, "ethereum", head)
		if tr.HistoricalUsd != nil || tr.TokenId != "ethereum" {
			t.Fatalf("transfer priced %v (token %q) with a 22-month-old price", *tr.HistoricalUsd, tr.TokenId)
		}
	}
	got := logs.String()
	if strings.Count(got, "transfers left without a USD value") != 1 || !strings.Contains(got, "pricing_id=ethereum") ||
		!strings.Contains(got, "newest_price=2025-01-14T00:00:00Z") || !strings.Contains(got, "block_time=2026-11-26T12:00:00Z") {
		t.Errorf("log %q: want one warning naming ethereum, the block's time and the newest price's", got)
	}
	mk.AddPrice("ethereum", head.Add(-time.Hour), 3000)
	tr := &eventsv1.Transfer{Amount: "1000000000000000000"}
	if x.fillTransfer(tr, "ethereum", head); tr.HistoricalUsd == nil || *tr.HistoricalUsd != 3000 {
		t.Errorf("with a fresh price: %v", tr.HistoricalUsd)
	}
}
