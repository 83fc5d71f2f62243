package publish

import (
	"testing"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"google.golang.org/protobuf/proto"
)

func TestEvent(t *testing.T) {
	r := store.AttributionRow{Address: attribution.Address{ChainType: "evm", Address: "0xab", EntityID: "acme", Label: "Hot", Version: 7},
		Entity: &attribution.Entity{ID: "acme", Name: "Acme", Type: "cex", LinkedIn: "https://linkedin.example/acme"}, UpdatedAtMs: 1000}
	ev := Event(r)
	want := &eventsv1.Attribution{ChainType: "evm", Address: "0xab", Entity: &eventsv1.Entity{Id: "acme", Name: "Acme", Type: "cex", Linkedin: "https://linkedin.example/acme"},
		Label: "Hot", UpdatedAtMs: 1000, Version: 7}
	if ev.Topic != eventsv1.TopicAttributions || ev.Key != "evm:0xab" || ev.ID != "evm:0xab@7" || !proto.Equal(ev.Msg, want) {
		t.Fatalf("event %+v", ev)
	}
	// Nothing known any more: a tombstone.
	empty := Event(store.AttributionRow{Address: attribution.Address{ChainType: "evm", Address: "0xab", Version: 8}})
	if empty.Msg != nil || empty.Key != "evm:0xab" || empty.ID != "evm:0xab@8" {
		t.Fatalf("tombstone %+v", empty)
	}
}
