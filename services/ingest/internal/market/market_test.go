package market

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

func TestPriceInForce(t *testing.T) {
	m := New()
	t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	_ = m.HandlePrices(context.Background(), []eventbus.Message[*eventsv1.Price]{
		{Msg: &eventsv1.Price{PricingId: "ethereum", TimeMs: t0.Add(time.Hour).UnixMilli(), Price: 3100}},
		{Msg: &eventsv1.Price{PricingId: "ethereum", TimeMs: t0.UnixMilli(), Price: 3000}},                // out of order
		{Msg: &eventsv1.Price{PricingId: "ethereum", TimeMs: t0.Add(time.Hour).UnixMilli(), Price: 3150}}, // replaces
	})
	for _, c := range []struct {
		at   time.Time
		want float64
		ok   bool
	}{
		{t0.Add(-time.Second), 0, false},
		{t0, 3000, true},
		{t0.Add(59 * time.Minute), 3000, true},
		{t0.Add(time.Hour), 3150, true},
		{t0.Add(time.Hour + MaxAge), 3150, true},
		{t0.Add(time.Hour + MaxAge + time.Second), 0, false},
	} {
		got, ok := m.PriceAt("ethereum", c.at)
		if got != c.want || ok != c.ok {
			t.Errorf("at %s: %v %v, want %v %v", c.at, got, ok, c.want, c.ok)
		}
	}
	if _, ok := m.PriceAt("", t0); ok {
		t.Error("empty pricing id priced")
	}
}

func TestRegistry(t *testing.T) {
	m := New()
	select {
	case <-m.Received():
		t.Fatal("received before any record")
	default:
	}
	usdc := &eventsv1.MarketToken{PricingId: "usd-coin", Deployments: []*eventsv1.MarketToken_Deployment{
		{Chain: "ethereum", Address: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", Decimals: 6}, {Chain: "base", Address: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"}}}
	_ = m.HandleTokens(context.Background(), []eventbus.Message[*eventsv1.MarketToken]{{Key: "usd-coin", Msg: usdc},
		{Key: "ethereum", Msg: &eventsv1.MarketToken{PricingId: "ethereum", Deployments: []*eventsv1.MarketToken_Deployment{{Chain: "ethereum"}}}}})
	<-m.Received()
	if got := m.PricingID("ethereum", "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"); got != "usd-coin" {
		t.Fatalf("usdc: %q", got)
	}
	if got := m.PricingID("ethereum", ""); got != "ethereum" {
		t.Fatalf("native: %q", got)
	}
	// A new version drops the base deployment; a tombstone removes the id.
	usdc.Deployments = usdc.Deployments[:1]
	_ = m.HandleTokens(context.Background(), []eventbus.Message[*eventsv1.MarketToken]{{Key: "usd-coin", Msg: usdc}, {Key: "ethereum", Tombstone: true, Msg: &eventsv1.MarketToken{}}})
	if got := m.PricingID("base", "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"); got != "" {
		t.Fatalf("dropped deployment still maps to %q", got)
	}
	if got := m.PricingID("ethereum", ""); got != "" {
		t.Fatalf("tombstoned id still maps: %q", got)
	}
}
