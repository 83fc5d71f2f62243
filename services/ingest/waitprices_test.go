package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/ingest/internal/market"
	taclient "github.com/chainintel/chainintel/services/token-analytics/client"
)

// importingSource answers as token-analytics does while its imports at start run, a number of
// times, then answers.
type importingSource struct{ left int }

func (s *importingSource) PriceWindow(context.Context, []string, time.Time, time.Time) (map[string][]taclient.PricePoint, error) {
	if s.left > 0 {
		s.left--
		return nil, httpx.Unavailable("token-analytics", &httpx.UpstreamError{Service: "token-analytics", Status: 503, Message: "the token list and price imports are not finished; retry later"})
	}
	return map[string][]taclient.PricePoint{}, nil
}

// The indexer starts only once token-analytics answers: waitPriceOwner retries while it is
// importing, and gives up (false) only when the service stops.
func TestIndexerWaitsForThePriceOwner(t *testing.T) {
	mk := market.New()
	src := &importingSource{left: 2}
	mk.SetSource(src)
	var failing []int64
	record := func(_ context.Context, n int64) { failing = append(failing, n) }
	if !waitPriceOwner(context.Background(), mk, slog.New(slog.DiscardHandler), record) || src.left != 0 {
		t.Fatalf("waited until %d answers were left", src.left)
	}
	// Each try token-analytics refused is a failing round (the alert on them fires while
	// nothing is indexed); its answer sets them back to 0.
	if fmt.Sprint(failing) != "[1 2 0]" {
		t.Errorf("failing rounds recorded %v, want [1 2 0]", failing)
	}
	src.left = 1 << 30
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if waitPriceOwner(ctx, mk, slog.New(slog.DiscardHandler), record) {
		t.Fatal("went on although the service stopped while token-analytics imports")
	}
	if !waitPriceOwner(context.Background(), market.New(), nil, record) {
		t.Fatal("without token-analytics configured the indexer must not wait")
	}
}
