package intelligence

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/publish"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"google.golang.org/protobuf/proto"
)

const (
	tagAddr2 = "0x2222222222222222222222222222222222222222"
	tagAddr3 = "0x3333333333333333333333333333333333333333"
)

// tagDoc is a curated file with acme's three addresses, each carrying the tags named for it.
func tagDoc(tags1, tags2, tags3 string) string {
	return `{"entities":[{"id":"acme-exchange","name":"Acme Exchange","type":"cex","description":"An exchange."}],
		"tags":[{"id":"cex","label":"Exchange","rank":1},{"id":"hot-wallet","label":"Hot wallet {param}","rank":2,"disablePage":true,"chain":"ethereum"},
			{"id":"scam-report","label":"Reported","rank":0,"excludeEntities":true}],
		"addresses":[{"chainType":"evm","address":"` + hot1 + `","entity":"acme-exchange","confidence":0.9,"tags":[` + tags1 + `]},
			{"chainType":"evm","address":"` + tagAddr2 + `","entity":"acme-exchange","confidence":0.9,"tags":[` + tags2 + `]},
			{"chainType":"evm","address":"` + tagAddr3 + `","entity":"acme-exchange","confidence":0.9,"tags":[` + tags3 + `]}]}`
}

func entityVersion(t *testing.T, id string) int64 {
	t.Helper()
	var v int64
	if err := pgtest.Pool(t).QueryRow(context.Background(), "SELECT version FROM intel.entities WHERE id = $1", id).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func dirtyEntities(t *testing.T) []string {
	t.Helper()
	rows, err := pgtest.Pool(t).Query(context.Background(), "SELECT entity_id FROM intel.entity_tags_dirty ORDER BY entity_id")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// carriers waits until the latest event of one of acme's addresses carries entity version v and
// returns the latest events that do.
func carriers(t *testing.T, log *attributionLog, v int64) []eventbus.Message[*eventsv1.Attribution] {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var out []eventbus.Message[*eventsv1.Attribution]
		for _, a := range []string{hot1, tagAddr2, tagAddr3} {
			m := log.latest(t, "evm:"+a, func(eventbus.Message[*eventsv1.Attribution]) bool { return true })
			if m.Msg.GetEntity().GetVersion() == v {
				out = append(out, m)
			}
		}
		if len(out) > 0 || time.Now().After(deadline) {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEntityTagsArePublished checks that an entity's populated tags reach its attribution
// events: tagging addresses of an entity publishes it once (one re-versioned address, whatever
// the number of addresses tagged) with the tags and a new details version, and untagging
// publishes it again without them.
func TestEntityTagsArePublished(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	brokers := kafkatest.Broker(t, eventsv1.TopicAttributions)
	cfg := testConfig(t)
	cfg.Brokers = brokers
	log := watchAttributions(t, brokers)
	st := store.New(pgtest.Pool(t))

	// First import: one tag that propagates and one that does not (excludeEntities).
	rep, err := ImportCurated(ctx, cfg, strings.NewReader(tagDoc(`{"id":"cex"},{"id":"scam-report"}`, ``, ``)))
	if err != nil || rep.Published != 3 {
		t.Fatalf("import: %+v, %v", rep, err)
	}
	cex := &eventsv1.PopulatedTag{Id: "cex", Label: "Exchange", Rank: 1}
	want := &eventsv1.Entity{Id: "acme-exchange", Name: "Acme Exchange", Type: "cex", Description: "An exchange.",
		PopulatedTags: []*eventsv1.PopulatedTag{cex}, Version: entityVersion(t, "acme-exchange")}
	for _, a := range []string{hot1, tagAddr2, tagAddr3} {
		m := log.latest(t, "evm:"+a, func(m eventbus.Message[*eventsv1.Attribution]) bool { return m.Msg.GetVersion() > 0 })
		if !proto.Equal(m.Msg.GetEntity(), want) {
			t.Fatalf("%s: entity %v, want %v", a, m.Msg.GetEntity(), want)
		}
	}

	// Tagging the two other addresses (their attributions do not change) marks the entity once;
	// one round recomputes it once and re-versions one address.
	noBrokers := testConfig(t)
	hot := `{"id":"hot-wallet","params":"eth"}`
	if rep, err := ImportCurated(ctx, noBrokers, strings.NewReader(tagDoc(`{"id":"cex"},{"id":"scam-report"}`, hot, hot))); err != nil || rep.AddressesChanged != 0 {
		t.Fatalf("tagging import: %+v, %v", rep, err)
	}
	if got := dirtyEntities(t); len(got) != 1 || got[0] != "acme-exchange" {
		t.Fatalf("dirty entities %v, want [acme-exchange]", got)
	}
	before := entityVersion(t, "acme-exchange")
	r, err := st.RefreshEntityTags(ctx, 10)
	if err != nil || r != (store.TagsRefresh{Entities: 1, Changed: 1, Republished: 1}) {
		t.Fatalf("refresh: %+v, %v", r, err)
	}
	if r, err := st.RefreshEntityTags(ctx, 10); err != nil || r != (store.TagsRefresh{}) {
		t.Fatalf("second refresh: %+v, %v", r, err)
	}
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	defer pub.Close()
	if n, err := publish.Drain(ctx, st, pub); err != nil || n != 1 {
		t.Fatalf("published %d (%v), want the one re-versioned address", n, err)
	}
	v := entityVersion(t, "acme-exchange")
	if v <= before {
		t.Fatalf("entity version %d after the tags changed, was %d", v, before)
	}
	want = &eventsv1.Entity{Id: "acme-exchange", Name: "Acme Exchange", Type: "cex", Description: "An exchange.",
		PopulatedTags: []*eventsv1.PopulatedTag{cex, {Id: "hot-wallet", Label: "Hot wallet eth", Rank: 2, TagParams: "eth", DisablePage: true, Chain: "ethereum"}},
		Version:       v}
	if got := carriers(t, log, v); len(got) != 1 || !proto.Equal(got[0].Msg.GetEntity(), want) {
		t.Fatalf("events carrying entity version %d: %v, want one with %v", v, got, want)
	}

	// Untagging every address publishes the entity without tags.
	if _, err := ImportCurated(ctx, cfg, strings.NewReader(tagDoc(``, ``, ``))); err != nil {
		t.Fatal(err)
	}
	v = entityVersion(t, "acme-exchange")
	want = &eventsv1.Entity{Id: "acme-exchange", Name: "Acme Exchange", Type: "cex", Description: "An exchange.", Version: v}
	if got := carriers(t, log, v); len(got) != 1 || !proto.Equal(got[0].Msg.GetEntity(), want) {
		t.Fatalf("events carrying entity version %d: %v, want one with %v", v, got, want)
	}
}
