package intelligence

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"google.golang.org/protobuf/proto"
)

// attributionLog collects the attribution events on a broker.
type attributionLog struct {
	mu   sync.Mutex
	msgs []eventbus.Message[*eventsv1.Attribution]
}

func watchAttributions(t *testing.T, brokers []string) *attributionLog {
	t.Helper()
	l := &attributionLog{}
	ctx, cancel := context.WithCancel(context.Background())
	c := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: brokers, Group: "test-" + t.Name(), Topic: eventsv1.TopicAttributions, MaxWait: 10 * time.Millisecond},
		func() *eventsv1.Attribution { return new(eventsv1.Attribution) },
		func(_ context.Context, b []eventbus.Message[*eventsv1.Attribution]) error {
			l.mu.Lock()
			l.msgs = append(l.msgs, b...)
			l.mu.Unlock()
			return nil
		})
	done := make(chan struct{})
	go func() { _ = c.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return l
}

// latest waits until an event for key satisfies ok and returns it.
func (l *attributionLog) latest(t *testing.T, key string, ok func(eventbus.Message[*eventsv1.Attribution]) bool) eventbus.Message[*eventsv1.Attribution] {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		for i := len(l.msgs) - 1; i >= 0; i-- {
			if l.msgs[i].Key == key {
				m := l.msgs[i]
				if ok(m) {
					l.mu.Unlock()
					return m
				}
				break
			}
		}
		l.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no matching attribution event for %s within 20s", key)
	return eventbus.Message[*eventsv1.Attribution]{}
}

const hot1 = "0x1111111111111111111111111111111111111111"

// TestCuratedImportRelabelAndConflicts imports curated data, relabels an address, renames an
// entity and lets two sources claim one address; every change is published with a growing
// version, and the conflict is resolved by confidence and reported.
func TestCuratedImportRelabelAndConflicts(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	brokers := kafkatest.Broker(t, eventsv1.TopicAttributions)
	cfg := testConfig(t)
	cfg.Brokers = brokers
	log := watchAttributions(t, brokers)
	key := "evm:" + hot1

	doc := `{"entities":[{"id":"acme-exchange","name":"Acme Exchange","type":"cex","website":"https://acme.example"},
			{"id":"other-fund","name":"Other Fund","type":"fund"}],
		"addresses":[{"chainType":"evm","address":"` + hot1 + `","entity":"acme-exchange","label":"Hot Wallet 1","confidence":0.9,
			"tags":[{"id":"exchange-hot-wallet","params":""}]},
			{"chain":"bitcoin","address":"bc1qm34lsc65zpw79lxes69zkqmk6ee3ewf0j77s3h","entity":"acme-exchange","label":"Cold"}],
		"tags":[{"id":"exchange-hot-wallet","label":"Exchange hot wallet","rank":10}]}`
	rep, err := ImportCurated(ctx, cfg, strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Entities != 2 || rep.AddressesChanged != 2 || rep.Published != 2 || len(rep.Conflicts) != 0 {
		t.Fatalf("first import: %+v", rep)
	}
	first := log.latest(t, key, func(m eventbus.Message[*eventsv1.Attribution]) bool { return true })
	if first.Msg.GetEntity().GetId() != "acme-exchange" || first.Msg.Label != "Hot Wallet 1" || first.Msg.ChainType != "evm" || first.Msg.Address != hot1 {
		t.Fatalf("first event: %v", first.Msg)
	}

	// The same file again changes and publishes nothing.
	rep, err = ImportCurated(ctx, cfg, strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Entities != 0 || rep.AddressesChanged != 0 || rep.Published != 0 {
		t.Fatalf("re-import: %+v", rep)
	}

	// Another source claims the hot wallet for another entity with less confidence: reported,
	// and the more confident claim keeps it.
	rep, err = ImportCuratedAs(ctx, cfg, "partner-feed", strings.NewReader("chain_type,address,entity,label,confidence\nevm,"+hot1+",other-fund,Fund wallet,0.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Conflicts) != 1 || rep.AddressesChanged != 0 {
		t.Fatalf("conflicting import: %+v", rep)
	}
	c := rep.Conflicts[0]
	if c.Winner != "acme-exchange" || c.WinnerSource != "curated" || c.Loser != "other-fund" || c.LoserSource != "partner-feed" || c.LoserConfidence != 0.5 {
		t.Fatalf("conflict: %+v", c)
	}

	// A relabel by the curated source moves the address to the other entity: a new version. acme
	// loses the moved address's tag, so one of its remaining addresses is published too, carrying
	// acme's new details.
	rep, err = ImportCurated(ctx, cfg, strings.NewReader("chain_type,address,entity,label,confidence\nevm,"+hot1+",other-fund,Treasury,1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.AddressesChanged != 1 || rep.Published != 2 {
		t.Fatalf("relabel: %+v", rep)
	}
	second := log.latest(t, key, func(m eventbus.Message[*eventsv1.Attribution]) bool { return m.Msg.GetEntity().GetId() == "other-fund" })
	if second.Msg.Label != "Treasury" || second.Msg.Version <= first.Msg.Version {
		t.Fatalf("relabel event: %v (first version %d)", second.Msg, first.Msg.Version)
	}

	// Renaming the entity republishes its addresses.
	rep, err = ImportCurated(ctx, cfg, strings.NewReader(`{"entities":[{"id":"other-fund","name":"Other Fund Ltd","type":"fund"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Entities != 1 || rep.Published != 1 {
		t.Fatalf("rename: %+v", rep)
	}
	third := log.latest(t, key, func(m eventbus.Message[*eventsv1.Attribution]) bool {
		return m.Msg.GetEntity().GetName() == "Other Fund Ltd"
	})
	if third.Msg.Version <= second.Msg.Version || third.EventID == second.EventID {
		t.Fatalf("rename event: %v", third.Msg)
	}

	// The API follows: the cache picks up the changes.
	api := newTestAPI(t, nil, nil)
	code, body := api.do(t, "GET", "/intelligence/address/"+hot1, "", nil)
	if code != 200 {
		t.Fatal(code, body)
	}
	assertJSON(t, "relabelled", body, `{"address":"`+hot1+`","chain":"ethereum","serviceEntity":{"id":"other-fund","name":"Other Fund Ltd","note":"","type":"fund","service":null},
		"serviceLabel":{"name":"Treasury","address":"`+hot1+`","chainType":"evm"},"contract":false,"isUserAddress":false}`)

	// A full re-publication sends every known address again, at its current version.
	n, err := Republish(ctx, cfg)
	if err != nil || n != 2 {
		t.Fatalf("republish: %d, %v", n, err)
	}
}

// TestCuratedRejectsBadFilesWhole checks that a file with problems changes nothing and that the
// error names each problem.
func TestCuratedRejectsBadFilesWhole(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	cfg := testConfig(t)
	cases := []struct{ doc, want string }{
		{`{"entities":[{"id":"Bad Id","name":"x"}],"addresses":[{"chainType":"evm","address":"0x12","entity":"x"}]}`,
			`curated JSON: 2 problems: entities[0].id "Bad Id": want a slug matching ^[a-z0-9][a-z0-9_.-]{0,127}$; addresses[0]: invalid evm address "0x12": want 0x followed by 40 hex digits`},
		{`{"addresses":[{"chainType":"evm","address":"` + hot1 + `","entity":"ghost"}]}`,
			`curated: addresses name entities that are neither in the file nor known: ghost`},
		{"chain_type,address,entity,label,confidence\nevm," + hot1 + ",x,y,1.5\n", `curated CSV: 1 problems: line 2: confidence "1.5": want a number from 0 to 1`},
		{"a,b\n", `curated file is neither JSON (starting with '{') nor CSV with the header chain_type,address,entity,label,confidence`},
		{`{"entities":[],"extra":1}`, `curated JSON: json: unknown field "extra"`},
	}
	for _, c := range cases {
		_, err := ImportCurated(ctx, cfg, strings.NewReader(c.doc))
		if err == nil || err.Error() != c.want {
			t.Errorf("import %q:\n got %v\nwant %s", c.doc, err, c.want)
		}
	}
	var n int
	if err := pgtestPoolCount(t, &n); err != nil || n != 0 {
		t.Fatalf("rejected files wrote %d addresses (%v)", n, err)
	}
}

// TestCuratedPublishesEntityDescription checks that an attribution event carries its entity's
// description (consumers such as balances show the entity from its addresses' events).
func TestCuratedPublishesEntityDescription(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	brokers := kafkatest.Broker(t, eventsv1.TopicAttributions)
	cfg := testConfig(t)
	cfg.Brokers = brokers
	log := watchAttributions(t, brokers)
	doc := `{"entities":[{"id":"acme-exchange","name":"Acme Exchange","type":"cex","description":"An exchange."}],
		"addresses":[{"chainType":"evm","address":"` + hot1 + `","entity":"acme-exchange","label":"Hot","confidence":0.9}]}`
	if rep, err := ImportCurated(ctx, cfg, strings.NewReader(doc)); err != nil || rep.Published != 1 {
		t.Fatalf("import: %+v, %v", rep, err)
	}
	m := log.latest(t, "evm:"+hot1, func(m eventbus.Message[*eventsv1.Attribution]) bool { return m.Msg.GetVersion() > 0 })
	want := &eventsv1.Entity{Id: "acme-exchange", Name: "Acme Exchange", Type: "cex", Description: "An exchange.", Version: entityVersion(t, "acme-exchange")}
	if !proto.Equal(m.Msg.GetEntity(), want) {
		t.Fatalf("entity %v, want %v", m.Msg.GetEntity(), want)
	}
}
