package http

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/internal/events"
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
	"github.com/chainintel/chainintel/services/token-analytics/migrations"
	ulmigrations "github.com/chainintel/chainintel/services/user-labels/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		if err := pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil); err != nil {
			return err
		}
		// The real user-labels service answers callers' labels in labels_test.go.
		return pgstore.Migrate(ctx, pool, ulmigrations.Schema, ulmigrations.FS, nil)
	}))
}

// now is the fixed clock of every test world.
var now = time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)

// env is the real router over the real store on the package's test database, emptied first.
type env struct {
	t     testing.TB
	h     http.Handler
	store *store.Store
	ev    events.Handlers
}

func newEnv(t testing.TB, native app.Native) *env {
	t.Helper()
	return newEnvAt(t, native, now)
}

// newEnvAt is newEnv with the clock fixed at at.
func newEnvAt(t testing.TB, native app.Native, at time.Time) *env {
	t.Helper()
	return newEnvWith(t, app.Options{Native: native, Now: func() time.Time { return at }})
}

// newEnvWith is newEnv with the service's options o (Now set).
func newEnvWith(t testing.TB, o app.Options) *env {
	t.Helper()
	native := o.Native
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(context.Background(), `TRUNCATE market.tokens, market.deployments, market.prices, market.price_extremes, market.outbox,
		market.flows, market.orphaned_blocks, market.address_classes, market.entity_types, market.flow_hours, market.flow_days, market.flow_address_hours,
		market.reserve_balances, market.network_blocks, market.flow_marks`); err != nil {
		t.Fatal(err)
	}
	st := store.New(pool)
	set, _ := chains.NewSet(nil)
	e := httpx.NewEngine(httpx.EngineOptions{Service: "token-analytics"})
	svc := app.New(st, o)
	svc.MarkImported()
	Register(e, svc, set)
	reserves := map[string]bool{}
	for _, a := range native.Reserves {
		reserves[native.Chain+":"+a] = true
	}
	return &env{t: t, h: e, store: st, ev: events.Handlers{Store: st, Chains: set, Reserves: reserves, Reserve: native.Chain + ":" + native.Token}}
}

// get answers a GET of path through the router.
func (e *env) get(path string) (int, string) {
	e.t.Helper()
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(w.Body)
	return w.Code, string(b)
}

// expect checks a GET's status and whole JSON body.
func (e *env) expect(path string, status int, want string) {
	e.t.Helper()
	code, body := e.get(path)
	if code != status {
		e.t.Fatalf("GET %s: status %d, want %d; body %s", path, code, status, body)
	}
	sameJSON(e.t, path, body, want)
}

func sameJSON(t testing.TB, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: body is not JSON: %v: %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, got, strings.Join(strings.Fields(want), " "))
	}
}

func (e *env) tokens(us ...app.TokenUpdate) {
	e.t.Helper()
	if err := e.store.UpsertTokens(context.Background(), us); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) prices(ps ...app.PricePoint) {
	e.t.Helper()
	if _, err := e.store.AddPrices(context.Background(), ps); err != nil {
		e.t.Fatal(err)
	}
}

// transfer is a test transfer: from, to, token contract, USD, units, time, block.
type transfer struct {
	id, from, to, token string
	usd, units          float64
	at                  time.Time
	block               string
}

// send delivers transfers as chain.transfers.v1 records (ethereum, 18 decimals) to the consumer.
func (e *env) send(ts ...transfer) {
	e.t.Helper()
	var batch []eventbus.Message[*eventsv1.Transfer]
	for _, t := range ts {
		usd := t.usd
		block := t.block
		if block == "" {
			block = "0xb1"
		}
		amount := fmt.Sprintf("%.0f000000000000000000", t.units)
		batch = append(batch, eventbus.Message[*eventsv1.Transfer]{Msg: &eventsv1.Transfer{Id: t.id, Chain: "ethereum",
			TransactionHash: strings.Split(t.id, "_")[0], BlockHash: block, BlockTimeMs: t.at.UnixMilli(), From: t.from, To: t.to,
			TokenAddress: t.token, TokenDecimals: 18, Amount: amount, HistoricalUsd: &usd, Type: eventsv1.TransferType_TRANSFER_TYPE_TOKEN}})
	}
	if err := e.ev.Transfers(context.Background(), batch); err != nil {
		e.t.Fatal(err)
	}
}

// attribute delivers intel.attributions.v1 records: address → entity type ("" untags it).
func (e *env) attribute(version int64, addrType ...string) {
	e.t.Helper()
	var batch []eventbus.Message[*eventsv1.Attribution]
	for i := 0; i < len(addrType); i += 2 {
		a, typ := addrType[i], addrType[i+1]
		if typ == "" {
			batch = append(batch, eventbus.Message[*eventsv1.Attribution]{Key: "evm:" + a, Tombstone: true, Msg: &eventsv1.Attribution{}})
			continue
		}
		batch = append(batch, eventbus.Message[*eventsv1.Attribution]{Key: "evm:" + a, Msg: &eventsv1.Attribution{ChainType: "evm",
			Address: a, Version: version, Entity: &eventsv1.Entity{Id: typ + "-" + a[len(a)-2:], Name: strings.ToUpper(typ) + " " + a[len(a)-2:], Type: typ}}})
	}
	if err := e.ev.Attributions(context.Background(), batch); err != nil {
		e.t.Fatal(err)
	}
}

// pool delivers a chain.swaps.v1 record of a swap in pool.
func (e *env) pool(addr string) {
	e.t.Helper()
	err := e.ev.Swaps(context.Background(), []eventbus.Message[*eventsv1.Swap]{{Msg: &eventsv1.Swap{Id: "0xs_1", Chain: "ethereum", ContractAddress: addr}}})
	if err != nil {
		e.t.Fatal(err)
	}
}

func ptr(v float64) *float64 { return &v }

// errorOf is the error message of an error body (the body itself when it is not one).
func errorOf(body string) string {
	var e struct{ Error string }
	if json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
		return body
	}
	return e.Error
}
