package http

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/migrations"
	"github.com/jackc/pgx/v5/pgconn"
)

const (
	hot = "0x00000000000000000000000000000000000000c2" // the exchange's wallet
	dep = "0x00000000000000000000000000000000000000c3" // a customer's deposit address at it
)

// exchangeWorld has alpha (price 2) move, in the hour before the clock, USD 70 from user1 and
// 50 from user2 into dep, 100 from dep to hot (a sweep) and 30 from hot to user1 (a
// withdrawal); hot is attributed to the exchange "binance-sim" (type cex, entity version 1),
// dep to nothing yet.
func exchangeWorld(t *testing.T) *env {
	e := newEnv(t, app.Native{})
	e.tokens(app.TokenUpdate{PricingID: "alpha", Name: "Alpha", Symbol: "ALP", MarketCap: ptr(5e9),
		Deployments: []app.Deployment{{Chain: "ethereum", Address: alpha, Decimals: 18}}})
	e.prices(app.PricePoint{PricingID: "alpha", Granularity: app.Tick, Time: now, Price: 2})
	e.attributions(attribution(hot, 1, "cex", 1, ""))
	e.send(exchangeTransfers()...)
	return e
}

func exchangeTransfers() []transfer {
	at := now.Add(-time.Hour)
	return []transfer{
		{id: "0xd1_1", from: user1, to: dep, token: alpha, usd: 70, units: 35, at: at},
		{id: "0xd2_1", from: user2, to: dep, token: alpha, usd: 50, units: 25, at: at},
		{id: "0xs1_1", from: dep, to: hot, token: alpha, usd: 100, units: 50, at: at},
		{id: "0xw1_1", from: hot, to: user1, token: alpha, usd: 30, units: 15, at: at},
	}
}

// attribution is an intel.attributions.v1 record of addr (version): attributed to binance-sim
// of entityType (entity version entityVersion) when entityType is set, a deposit address of
// deposit when that is set.
func attribution(addr string, version int64, entityType string, entityVersion int64, deposit string) *eventsv1.Attribution {
	a := &eventsv1.Attribution{ChainType: "evm", Address: addr, Version: version, DepositServiceId: deposit}
	if entityType != "" {
		a.Entity = &eventsv1.Entity{Id: "binance-sim", Name: "Binance (sim)", Type: entityType, Version: entityVersion}
	}
	return a
}

// attributions delivers attribution records to the consumer, in one batch.
func (e *env) attributions(as ...*eventsv1.Attribution) {
	e.t.Helper()
	batch := make([]eventbus.Message[*eventsv1.Attribution], 0, len(as))
	for _, a := range as {
		batch = append(batch, eventbus.Message[*eventsv1.Attribution]{Key: a.ChainType + ":" + a.Address, Msg: a})
	}
	if err := e.ev.Attributions(context.Background(), batch); err != nil {
		e.t.Fatal(err)
	}
}

// expectCex checks alpha's current CEX flows in /token/top (volume 250, no DEX flows) and that
// the rollups equal a recomputation from the counted transfers.
func (e *env) expectCex(step string, in, out float64) {
	e.t.Helper()
	e.expectFlows(step, 250, in, out)
}

// expectFlows is expectCex with the volume.
func (e *env) expectFlows(step string, volume, in, out float64) {
	e.t.Helper()
	e.expect("/token/top?timeframe=24h&tokenIds=alpha&numReferencePeriods=1", 200, fmt.Sprintf(`{"tokens":[
		{"token":{"id":"alpha","symbol":"ALP","marketCap":5e9},
		 "current":{"price":2,"volume":%v,"inflowCexVolume":%v,"outflowCexVolume":%v,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":%v},
		 "previous":{"price":0,"volume":0,"inflowCexVolume":0,"outflowCexVolume":0,"inflowDexVolume":0,"outflowDexVolume":0,"netflow":0}}],"total":1}`,
		volume, in, out, in-out))
	rollupsMatch(e.t.(*testing.T), step)
}

// TestDepositAddressCountsAsItsExchange: a deposit address counts as its exchange. Customer
// deposits into it are CEX inflow, its sweep into the exchange's wallet is neither inflow nor
// outflow; an address becoming or ceasing to be a deposit address, and the exchange's type
// changing, re-classify the past hours as a relabel does; the same events twice change nothing.
func TestDepositAddressCountsAsItsExchange(t *testing.T) {
	t.Run("open hours", func(t *testing.T) { depositReclassifies(t, false) })
	t.Run("closed hours", func(t *testing.T) { depositReclassifies(t, true) })
}

func depositReclassifies(t *testing.T, closed bool) {
	e := exchangeWorld(t)
	if closed {
		if c, err := e.store.CloseAllHours(context.Background()); err != nil || c.Transfers == 0 {
			t.Fatalf("closed %+v, %v", c, err)
		}
	}
	// dep unattributed: the sweep is what reaches the exchange, the deposits are not seen.
	e.expectCex("no deposit address", 100, 30)
	// dep becomes binance-sim's deposit address: the deposits (70 + 50) are CEX inflow, the sweep
	// is internal to the exchange.
	e.attributions(attribution(dep, 1, "", 0, "binance-sim"))
	e.expectCex("deposit address", 120, 30)
	// The exchange becomes a fund (a newer entity version, carried by hot's attribution): neither
	// hot nor its deposit address is a CEX any more.
	e.attributions(attribution(hot, 2, "fund", 2, ""))
	e.expectCex("exchange is a fund", 0, 0)
	// An older entity version (another address's record) changes nothing.
	e.attributions(attribution("0x00000000000000000000000000000000000000f1", 1, "cex", 1, ""))
	e.expectCex("older entity version", 0, 0)
	// A CEX again.
	e.attributions(attribution(hot, 3, "cex", 3, ""))
	e.expectCex("exchange is a cex again", 120, 30)
	// The same events twice change nothing.
	e.send(exchangeTransfers()...)
	e.attributions(attribution(hot, 3, "cex", 3, ""), attribution(dep, 1, "", 0, "binance-sim"))
	e.expectCex("redelivered", 120, 30)
	// dep ceases to be a deposit address (a newer attribution without a deposit service).
	e.attributions(attribution(dep, 2, "", 0, ""))
	e.expectCex("no longer a deposit address", 100, 30)
	// An older attribution does not make it one again.
	e.attributions(attribution(dep, 1, "", 0, "binance-sim"))
	e.expectCex("older deposit attribution", 100, 30)
}

// TestEntityTypeChangeReclassifiesItsWallets: an address attributed to an entity counts as the
// entity's stored type (of the highest entity version), so a type change carried by another
// address's record (its attribution or its prediction) re-classifies the entity's attributed
// wallet as well as its deposit addresses, and an attribution carrying an older entity version
// counts as the stored type; a wallet left classified by its own record's type (what a replica of
// the previous release leaves) is classified again at start.
func TestEntityTypeChangeReclassifiesItsWallets(t *testing.T) {
	for _, closed := range []bool{false, true} {
		t.Run(map[bool]string{false: "open hours", true: "closed hours"}[closed], func(t *testing.T) {
			e := exchangeWorld(t)
			if closed {
				if _, err := e.store.CloseAllHours(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			other := "0x00000000000000000000000000000000000000f1"
			e.attributions(attribution(dep, 1, "", 0, "binance-sim"))
			e.expectCex("a cex", 120, 30)
			// another wallet's attribution names binance-sim a fund (entity version 2)
			e.attributions(attribution(other, 1, "fund", 2, ""))
			e.expectCex("a fund by another wallet's record", 0, 0)
			// hot's own newer attribution carrying the older entity version counts as the stored type
			e.attributions(attribution(hot, 2, "cex", 1, ""))
			e.expectCex("an older entity version on hot's record", 0, 0)
			// a prediction on an unrelated address names it a cex again (entity version 3)
			p := &eventsv1.Attribution{ChainType: "evm", Address: user2, Version: 1,
				PredictedEntity: &eventsv1.Entity{Id: "binance-sim", Name: "Binance (sim)", Type: "cex", Version: 3}}
			e.attributions(p)
			e.expectCex("a cex by a prediction", 120, 30)
			// hot classified as a fund by its own record, its flows moved (what a replica of the
			// previous release leaves), while binance-sim's stored type is cex
			pool := pgtest.Pool(t)
			if _, err := pool.Exec(context.Background(), `UPDATE market.address_classes SET attributed_type = 'fund' WHERE address = $1`, hot); err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(context.Background(), `UPDATE market.flow_hours SET cex_in_usd = cex_in_usd - 100, cex_out_usd = cex_out_usd - 30;
				UPDATE market.flow_days SET cex_in_usd = cex_in_usd - 100, cex_out_usd = cex_out_usd - 30`); err != nil {
				t.Fatal(err)
			}
			e.expectCex("as a previous release left it", 20, 0)
			for i := range 2 {
				if err := e.store.ClassifyDepositAddresses(context.Background()); err != nil {
					t.Fatal(err)
				}
				e.expectCex(fmt.Sprintf("start %d", i+1), 120, 30)
			}
		})
	}
}

// TestDepositAddressBeforeItsExchangeIsKnown: a deposit address attributed before any record
// of its exchange's entity counts as nothing, and as the exchange once a record names its type;
// the stored classification is what a start finds nothing to redo in.
func TestDepositAddressBeforeItsExchangeIsKnown(t *testing.T) {
	e := newEnv(t, app.Native{})
	e.tokens(app.TokenUpdate{PricingID: "alpha", Name: "Alpha", Symbol: "ALP", MarketCap: ptr(5e9),
		Deployments: []app.Deployment{{Chain: "ethereum", Address: alpha, Decimals: 18}}})
	e.prices(app.PricePoint{PricingID: "alpha", Granularity: app.Tick, Time: now, Price: 2})
	e.send(exchangeTransfers()...)
	e.attributions(attribution(dep, 1, "", 0, "binance-sim"))
	e.expectCex("exchange unknown", 0, 0)
	e.attributions(attribution(hot, 1, "cex", 1, ""))
	e.expectCex("exchange known", 120, 30)
	if err := e.store.ClassifyDepositAddresses(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.expectCex("start", 120, 30)
}

// TestDepositAddressesClassifiedAtStart: deposit addresses stored with a deposit service but
// classified by another type (what migration 00019 leaves: deposit_type unset) are classified
// by ClassifyDepositAddresses, their past flows moved, and a second run changes nothing.
func TestDepositAddressesClassifiedAtStart(t *testing.T) {
	e := exchangeWorld(t)
	e.attributions(attribution(dep, 1, "", 0, "binance-sim"))
	if _, err := e.store.CloseAllHours(context.Background()); err != nil {
		t.Fatal(err)
	}
	// As the migration leaves them: the classification of dep and its moved flows undone.
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(context.Background(), `UPDATE market.address_classes SET deposit_type = NULL WHERE address = $1`, dep); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), `UPDATE market.flow_hours SET cex_in_usd = cex_in_usd - 20;
		UPDATE market.flow_days SET cex_in_usd = cex_in_usd - 20`); err != nil {
		t.Fatal(err)
	}
	e.expectCex("as migrated", 100, 30)
	for i := 0; i < 2; i++ {
		if err := e.store.ClassifyDepositAddresses(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.expectCex(fmt.Sprintf("start %d", i+1), 120, 30)
	}
}

// TestDepositFlowsAsTheyArrive: transfers of an already known deposit address are classified
// as they are counted, by a first delivery and by a reorg moving them (the settling path), in
// open and closed hours.
func TestDepositFlowsAsTheyArrive(t *testing.T) {
	e := newEnv(t, app.Native{})
	e.tokens(app.TokenUpdate{PricingID: "alpha", Name: "Alpha", Symbol: "ALP", MarketCap: ptr(5e9),
		Deployments: []app.Deployment{{Chain: "ethereum", Address: alpha, Decimals: 18}}})
	e.prices(app.PricePoint{PricingID: "alpha", Granularity: app.Tick, Time: now, Price: 2})
	e.attributions(attribution(hot, 1, "cex", 1, ""), attribution(dep, 1, "", 0, "binance-sim"))
	e.send(exchangeTransfers()...)
	e.expectCex("first delivery", 120, 30)
	// The sweep's and a deposit's block is orphaned, then both are seen again in another block.
	ts := exchangeTransfers()
	e.reorg([]string{"0xb1"}, nil)
	e.expectFlows("orphaned", 0, 0, 0)
	for i := range ts {
		ts[i].block = "0xb2"
	}
	e.send(ts...)
	e.expectCex("in another block", 120, 30)
	if _, err := e.store.CloseAllHours(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.reorg([]string{"0xb2"}, []string{"0xb1"})
	e.expectCex("back in the first block, closed", 120, 30)
	e.reorg([]string{"0xb1"}, nil)
	e.expectFlows("every block orphaned, closed", 0, 0, 0)
}

// TestMigrationSeedsDepositServices runs migration 00019's seeding statements over attributions
// stored before it (deposit service and entity only in the stored info, no entity types): the
// start's ClassifyDepositAddresses then classifies the deposit address and moves its past
// flows. The previous release's statements naming entity_type fail, so its replicas' transfer
// batches and class changes are retried by new ones during the roll.
func TestMigrationSeedsDepositServices(t *testing.T) {
	ctx := context.Background()
	e := exchangeWorld(t)
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE market.entity_types`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO market.address_classes (chain_type, address, version, info)
		VALUES ('evm', $1, 1, '{"depositServiceID":"binance-sim"}')`, dep); err != nil {
		t.Fatal(err)
	}
	e.expectCex("before the migration", 100, 30)
	b, err := fs.ReadFile(migrations.FS, "00019_deposit_classes.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{`(?s)UPDATE market\.address_classes .*?;`, `(?s)INSERT INTO market\.entity_types .*?;`} {
		seed := regexp.MustCompile(re).Find(b)
		if seed == nil {
			t.Fatalf("no %s in migration 00019", re)
		}
		if _, err := pool.Exec(ctx, string(seed)); err != nil {
			t.Fatal(err)
		}
	}
	e.expectCex("migrated", 100, 30)
	if err := e.store.ClassifyDepositAddresses(ctx); err != nil {
		t.Fatal(err)
	}
	e.expectCex("started", 120, 30)

	for _, previous := range []string{
		`SELECT market.flow_class(c.entity_type, c.is_pool) FROM market.address_classes c`,
		`UPDATE market.address_classes SET entity_type = 'cex' WHERE false`,
	} {
		_, err := pool.Exec(ctx, previous)
		if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "42703" {
			t.Errorf("the previous release's %q: %v, want an undefined column", previous, err)
		}
	}
}
