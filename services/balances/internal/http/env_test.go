package http

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/balances/internal/app"
	"github.com/chainintel/chainintel/services/balances/internal/store"
	"github.com/chainintel/chainintel/services/balances/migrations"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

// The known world: today is 2026-03-10; Binance holds a1 and a2; the caller's user entity holds
// a2 and a3; a3 carries the caller's label.
const (
	a1      = "0x1111111111111111111111111111111111111111"
	a2      = "0x2222222222222222222222222222222222222222"
	a3      = "0x3333333333333333333333333333333333333333"
	usdc    = "0x0000000000000000000000000000000000000a0b"
	bigTok  = "0x0000000000000000000000000000000000000b1b"
	userEnt = "0f8fad5b-d9cb-469f-a165-70867728950e"
	solOwn  = "So11111111111111111111111111111111111111112"
	solSub  = "Stake11111111111111111111111111111111111111"
	two70   = "1180591620717411303424" // 2^70, 18 decimals: 1180.591620717411303424
)

var now = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func at(day, hour int) time.Time { return time.Date(2026, 3, day, hour, 0, 0, 0, time.UTC) }

// fakeLabels is the caller's view from user-labels; additions are the caller's additions to
// operator entities.
// down, when set, is what every call answers (a user-labels outage); calls counts the calls.
type fakeLabels struct {
	additions map[string]map[string][]string
	down      error
	calls     *int
}

func (f fakeLabels) call() error {
	if f.calls != nil {
		*f.calls++
	}
	return f.down
}

func (f fakeLabels) Additions(_ context.Context, id string) (map[string][]string, error) {
	if err := f.call(); err != nil {
		return nil, err
	}
	return f.additions[id], nil
}

func (f fakeLabels) LookupWithAdditions(ctx context.Context, refs []ulclient.AddressRef) (ulclient.Lookup, error) {
	out, err := f.Lookup(ctx, refs)
	if err == nil && len(f.additions) > 0 {
		out.Additions = f.additions
	}
	return out, err
}

func (f fakeLabels) Lookup(_ context.Context, refs []ulclient.AddressRef) (ulclient.Lookup, error) {
	out := ulclient.Lookup{Labels: map[string]ulclient.Label{}, Entities: map[string][]ulclient.EntityRef{}}
	if err := f.call(); err != nil {
		return out, err
	}
	for _, r := range refs {
		if r.Address == a3 {
			out.Labels[r.Key()] = ulclient.Label{Name: "cold wallet"}
			out.Entities[r.Key()] = []ulclient.EntityRef{{ID: userEnt, Name: "my desk"}}
		}
	}
	return out, nil
}

func (f fakeLabels) AdditionsOf(_ context.Context, ids []string) (map[string]map[string][]string, error) {
	if err := f.call(); err != nil {
		return nil, err
	}
	out := map[string]map[string][]string{}
	for _, id := range ids {
		if m, ok := f.additions[id]; ok {
			out[id] = m
		}
	}
	return out, nil
}

func (f fakeLabels) Entities(ctx context.Context, ids []string) (map[string]ulclient.UserEntity, error) {
	if err := f.call(); err != nil {
		return nil, err
	}
	out := map[string]ulclient.UserEntity{}
	for _, id := range ids {
		if id == userEnt {
			out[id] = ulclient.UserEntity{ID: userEnt, Name: "my desk", Type: "user", Addresses: map[string][]string{"evm": {a2, a3}}}
		}
	}
	return out, nil
}

func (f fakeLabels) Entity(_ context.Context, id string) (ulclient.UserEntity, error) {
	if err := f.call(); err != nil {
		return ulclient.UserEntity{}, err
	}
	if id != userEnt {
		return ulclient.UserEntity{}, ulclient.ErrNotFound
	}
	return ulclient.UserEntity{ID: userEnt, Name: "my desk", Type: "user", Addresses: map[string][]string{"evm": {a2, a3}}}, nil
}

type env struct {
	h  http.Handler
	st *store.Store
}

func n(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return v
}

func ob(chain, addr, token string, block int64, t time.Time, bal string) store.Observation {
	return store.Observation{Chain: chain, Address: addr, Token: token, BlockNumber: block, BlockHash: "0xh" + big.NewInt(block).String(),
		BlockTime: t, Balance: n(bal)}
}

// newEnv builds the known world on an emptied database and the real router over it.
func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, fakeLabels{})
}

// newEnvWith is newEnv with the caller's view from labels.
func newEnvWith(t *testing.T, labels fakeLabels) *env {
	t.Helper()
	ctx := context.Background()
	st := emptyStore(t)
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(st.ApplyTokens(ctx, []store.MarketToken{
		{PricingID: "ethereum", Name: "Ethereum", Symbol: "ETH", TVTicker: "ETHUSD", Deployments: []store.Deployment{{Chain: "ethereum", Decimals: 18}}},
		{PricingID: "usd-coin", Name: "USD Coin", Symbol: "USDC", Deployments: []store.Deployment{{Chain: "ethereum", Token: usdc, Decimals: 6}}},
		{PricingID: "big-token", Name: "Big", Symbol: "BIG", Deployments: []store.Deployment{{Chain: "ethereum", Token: bigTok, Decimals: 18}}},
	}, nil))
	check(st.WritePrices(ctx, []store.PricePoint{
		{PricingID: "ethereum", Time: at(8, 0), Price: 2000}, {PricingID: "ethereum", Time: at(9, 0), Price: 2100},
		{PricingID: "ethereum", Time: at(10, 11), Price: 2200}, {PricingID: "usd-coin", Time: at(8, 0), Price: 1},
		{PricingID: "solana", Time: at(10, 0), Price: 100},
	}))
	binance := &store.Entity{ID: "binance", Name: "Binance", Type: "cex", Service: "exchange", Description: "Centralised exchange.",
		Tags: []store.Tag{{ID: "cex", Label: "Exchange", Rank: 1}, {ID: "hot-wallet", Label: "Hot wallet", Rank: 2, Params: "eth", DisablePage: true, Chain: "ethereum"}}}
	_, err := st.ApplyAttributions(ctx, []store.Attribution{
		{ChainType: "evm", Address: a1, Entity: binance, Label: "Binance 14", Version: 1},
		{ChainType: "evm", Address: a2, Entity: binance, Version: 1},
		{ChainType: "solana", Address: solOwn, Entity: binance, Version: 1},
	})
	check(err)
	sub := ob("solana", solSub, "", 900, at(10, 1), "5000000000")
	sub.Owner, sub.Kind = solOwn, "stake"
	_, err = st.WriteObservations(ctx, []store.Observation{
		ob("ethereum", a1, "", 100, at(8, 1), "1000000000000000000"),
		ob("ethereum", a1, "", 200, at(9, 1), "2000000000000000000"),
		ob("ethereum", a1, usdc, 210, at(9, 2), "500000000"),
		ob("ethereum", a2, "", 110, at(8, 2), "3000000000000000000"),
		ob("ethereum", a2, bigTok, 220, at(9, 3), two70),
		ob("ethereum", a3, "", 300, at(10, 1), "500000000000000000"),
		sub,
	})
	check(err)
	cs, err := chains.NewSet(nil)
	check(err)
	e := httpx.NewEngine(httpx.EngineOptions{Service: "balances"})
	Register(e, app.New(st, labels, cs, app.WithClock(func() time.Time { return now })))
	return &env{h: e, st: st}
}

// emptyStore is a store over the test database with every table emptied.
func emptyStore(t *testing.T) *store.Store {
	t.Helper()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(context.Background(), `TRUNCATE balances.observations, balances.orphaned_blocks, balances.current,
		balances.token_supply, balances.address_daily, balances.entity_change, balances.entity_current, balances.observed_tokens,
		balances.market_tokens, balances.deployments, balances.prices, balances.price_days, balances.attributions, balances.entities,
		balances.top_holders, balances.top_floor, balances.prune_horizon`); err != nil {
		t.Fatal(err)
	}
	return store.New(pool)
}

// as is the real router over ev's world for a caller whose view from user-labels is labels.
func (ev *env) as(t *testing.T, labels fakeLabels) *env {
	t.Helper()
	cs, err := chains.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	e := httpx.NewEngine(httpx.EngineOptions{Service: "balances"})
	Register(e, app.New(ev.st, labels, cs, app.WithClock(func() time.Time { return now })))
	return &env{h: e, st: ev.st}
}

// get returns the status and the decoded body.
func (ev *env) get(t *testing.T, path string) (int, any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	rec := httptest.NewRecorder()
	ev.h.ServeHTTP(rec, req)
	var v any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("%s: body %q is not JSON: %v", path, rec.Body.String(), err)
	}
	return rec.Code, v
}

// post sends body and compares the whole answer with want.
func (ev *env) post(t *testing.T, path, body string, status int, want string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	ev.h.ServeHTTP(rec, req)
	var got, w any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("%s: body %q is not JSON", path, rec.Body.String())
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if rec.Code != status || !reflect.DeepEqual(got, w) {
		t.Fatalf("POST %s %s: %d %s, want %d %s", path, body, rec.Code, rec.Body.String(), status, want)
	}
}

// expect compares the whole answer with want (JSON text).
func (ev *env) expect(t *testing.T, path string, status int, want string) {
	t.Helper()
	code, got := ev.get(t, path)
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON for %s: %v", path, err)
	}
	if code != status || !reflect.DeepEqual(got, w) {
		g, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(w, "", " ")
		t.Fatalf("GET %s: status %d, want %d\n got: %s\nwant: %s", path, code, status, g, wj)
	}
}
