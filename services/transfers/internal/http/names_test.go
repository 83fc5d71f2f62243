package http_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	svchttp "github.com/chainintel/chainintel/services/transfers/internal/http"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
	"github.com/gin-gonic/gin"
)

// registry is a token registry knowing some pricing ids; it records its calls and, down,
// answers every call with an error.
type registry struct {
	mu    sync.Mutex
	known map[string]bool
	calls [][]string
	down  bool
	hang  bool // answer only when the call's context ends
}

func newRegistry(ids ...string) *registry {
	r := &registry{known: map[string]bool{}}
	for _, id := range ids {
		r.known[id] = true
	}
	return r
}

func (r *registry) Known(ctx context.Context, ids []string) (map[string]bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, slices.Clone(ids))
	if r.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if r.down {
		return nil, errors.New("connection refused")
	}
	out := map[string]bool{}
	for _, id := range ids {
		if r.known[id] {
			out[id] = true
		}
	}
	return out, nil
}

// took returns and forgets the calls made so far.
func (r *registry) took() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

// countingStore counts the read model's lookups of names (SetSize: the deposit: check).
type countingStore struct {
	app.Store
	mu      sync.Mutex
	lookups [][]string
}

func (s *countingStore) SetSize(ctx context.Context, set store.AddrSet) (store.AddrSet, map[string]bool, error) {
	s.mu.Lock()
	s.lookups = append(s.lookups, slices.Clone(set.Entities))
	s.mu.Unlock()
	return s.Store.SetSize(ctx, set)
}

// The deposit: entities the read model gave no deposit addresses are looked up in one read per
// request, whatever the parameters naming them; the first unknown, in parameter order, is the
// 404. Whole bodies.
func TestDepositLookups(t *testing.T) {
	e := world(t)
	cs, _ := chains.NewSet(nil)
	st := &countingStore{Store: e.store}
	r := httpx.NewEngine(httpx.EngineOptions{Service: "transfers"})
	r.Use(httpx.IdentityMiddleware(httpx.NewSigner(secret)))
	svchttp.Register(r, app.New(st, e.render, cs), query.Parser{Chains: cs, Now: func() time.Time { return tw.Now }})
	cases := []struct {
		path    string
		status  int
		body    string
		lookups [][]string
	}{
		{"/transfers?from=deposit:nope,deposit:a16z,!deposit:nope2&to=deposit:zzz,deposit:binance", 404,
			`{"error":"from: unknown entity \"nope\" in deposit:nope"}`, [][]string{{"a16z", "nope", "nope2", "zzz"}}},
		{"/transfers?from=deposit:a16z&to=!deposit:zzz", 404, `{"error":"to: unknown entity \"zzz\" in deposit:zzz"}`, [][]string{{"a16z", "zzz"}}},
		{"/transfers?from=deposit:a16z&to=deposit:uniswap", 200, `{"transfers":[],"count":0}`, [][]string{{"a16z", "uniswap"}}},
		{"/transfers?from=deposit:binance&to=deposit:coinbase&usdGte=1e12", 200, `{"transfers":[],"count":0}`, nil},
		{"/swaps?senders=deposit:nope&receivers=deposit:a16z&from=deposit:nope2", 404,
			`{"error":"from: unknown entity \"nope2\" in deposit:nope2"}`, [][]string{{"a16z", "nope", "nope2"}}},
	}
	for _, c := range cases {
		st.mu.Lock()
		st.lookups = nil
		st.mu.Unlock()
		w := serve(r, &alice, "GET", c.path, "")
		if w.Code != c.status || w.Body.String() != c.body {
			t.Fatalf("%s: got %d %s\nwant %d %s", c.path, w.Code, w.Body.String(), c.status, c.body)
		}
		st.mu.Lock()
		got := st.lookups
		st.mu.Unlock()
		if !reflect.DeepEqual(got, c.lookups) {
			t.Errorf("%s: lookups %v, want %v", c.path, got, c.lookups)
		}
	}
}

// With no chains requested, an address is checked against the configured chains, as balances
// checks its address routes: one that fits none of them is a 404 naming them, in the path and
// in the filters. Whole bodies.
func TestAddressOffTheConfiguredChains(t *testing.T) {
	e := world(t)
	cs, _ := chains.NewSet([]string{"bitcoin", "dogecoin"})
	r := httpx.NewEngine(httpx.EngineOptions{Service: "transfers"})
	r.Use(httpx.IdentityMiddleware(httpx.NewSigner(secret)))
	svchttp.Register(r, app.New(e.store, e.render, cs), query.Parser{Chains: cs, Now: func() time.Time { return tw.Now }})
	off := func(param string) string {
		return `{"error":"` + param + `: address \"` + tw.U1 + `\" is not valid on the configured chains (bitcoin, dogecoin)"}`
	}
	cases := []struct {
		path   string
		status int
		body   string
	}{
		{"/counterparties/address/" + tw.U1, 404, off("address")},
		{"/flow/address/" + tw.U1, 404, off("address")},
		{"/volume/address/" + tw.U1, 404, off("address")},
		{"/transfers?base=" + tw.U1, 404, off("base")},
		{"/transfers?from=!" + tw.U1, 404, off("from")},
		{"/swaps?senders=" + tw.U1, 404, off("senders")},
		{"/transfers/histogram/simple?base=" + tw.U1, 404, off("base")},
		{"/counterparties/entity/binance", 200, `{}`},
		{"/transfers?base=binance", 200, `{"transfers":[],"count":0}`},
	}
	for _, c := range cases {
		w := serve(r, &alice, "GET", c.path, "")
		if w.Code != c.status || w.Body.String() != c.body {
			t.Errorf("%s: got %d %s\nwant %d %s", c.path, w.Code, w.Body.String(), c.status, c.body)
		}
	}
}

// namesRouter is the world's router with a token registry.
func namesRouter(t *testing.T) *gin.Engine {
	return tokensRouter(t, newRegistry("usd-coin", "weth", "ethereum"), app.TokenOptions{})
}

func tokensRouter(t *testing.T, reg app.Tokens, o app.TokenOptions) *gin.Engine {
	e := world(t)
	cs, _ := chains.NewSet(nil)
	r := httpx.NewEngine(httpx.EngineOptions{Service: "transfers"})
	r.Use(httpx.IdentityMiddleware(httpx.NewSigner(secret)))
	svchttp.Register(r, app.New(e.store, e.render, cs, app.WithTokens(reg, o)),
		query.Parser{Chains: cs, Now: func() time.Time { return tw.Now }})
	return r
}

// Names in filters that nothing knows: an entity (also behind deposit:) and a pricing id are a
// 404 naming the parameter, an entity type a 400 listing the types; an unknown token address and
// an entity without deposit addresses match nothing. An address whose format fits none of the
// requested chains is a 404 on every route, in a filter or the path (API.md). Whole bodies.
func TestUnknownNames(t *testing.T) {
	r := namesRouter(t)
	const empty = `{"transfers":[],"count":0}`
	notOnBitcoin := func(param string) string {
		return `{"error":"` + param + `: address \"` + tw.U1 + `\" is not valid on the requested chains (bitcoin)"}`
	}
	types := `is not an entity type (one of cex, dex, fund, individual, user)"}`
	cases := []struct {
		path   string
		status int
		body   string
	}{
		{"/transfers?from=deposit:nope", 404, `{"error":"from: unknown entity \"nope\" in deposit:nope"}`},
		{"/transfers?to=!deposit:nope", 404, `{"error":"to: unknown entity \"nope\" in deposit:nope"}`},
		{"/transfers?to=deposit:a16z", 200, empty},
		{"/transfers?from=type:nope", 400, `{"error":"from: type:nope ` + types},
		{"/transfers?from=type:individual", 200, empty}, // documented (API.md), no address has it
		{"/transfers?to=type:user&from=!type:individual", 200, empty},
		{"/transfers/histogram?from=type:individual", 200, `[]`},
		{"/swaps?senders=type:user", 200, `{"swaps":[],"count":0}`},
		{"/transfers?to=!type:nope&from=type:cex", 400, `{"error":"to: type:nope ` + types},
		{"/transfers?tokens=nope", 404, `{"error":"tokens: unknown token \"nope\""}`},
		{"/transfers?tokens=usd-coin,nope", 404, `{"error":"tokens: unknown token \"nope\""}`},
		{"/transfers?tokens=0x9999999999999999999999999999999999999999", 200, empty},
		{"/transfers?tokens=weth&base=a16z", 200, `{"transfers":[{"id":"` + tw.ID("t7") + `","transactionHash":"` + tw.TxHash(7) +
			`","blockHash":"` + tw.BlockHash("ethereum", 7) + `","blockNumber":107,"blockTimestamp":"2026-01-04T08:00:00Z","chain":"ethereum",` +
			`"fromAddress":{"address":"` + tw.F + `","chain":"ethereum","serviceEntity":{"id":"a16z","name":"a16z","note":"","type":"fund","service":true},"contract":false,"isUserAddress":false},` +
			`"toAddress":{"address":"` + tw.P + `","chain":"ethereum","serviceEntity":{"id":"uniswap","name":"Uniswap","note":"","type":"dex","service":null},` +
			`"serviceLabel":{"name":"USDC/WETH Pool","address":"` + tw.P + `","chainType":"evm"},"contract":true,"isUserAddress":false},` +
			`"fromIsContract":false,"toIsContract":true,"tokenAddress":"` + tw.WETH + `","tokenId":"weth","tokenName":"Wrapped Ether","tokenSymbol":"WETH",` +
			`"tokenDecimals":18,"unitValue":5,"historicalUSD":10000,"type":"token"}],"count":1}`},
		{"/transfers?base=nope", 404, `{"error":"base: unknown entity \"nope\""}`},
		{"/transfers?base=binance&counterparties=nope", 404, `{"error":"counterparties: unknown entity \"nope\""}`},
		{"/transfers/histogram?from=deposit:nope", 404, `{"error":"from: unknown entity \"nope\" in deposit:nope"}`},
		{"/transfers/histogram?to=type:nope", 400, `{"error":"to: type:nope ` + types},
		{"/transfers/histogram?tokens=nope", 404, `{"error":"tokens: unknown token \"nope\""}`},
		{"/transfers/histogram/simple?base=nope", 404, `{"error":"base: unknown entity \"nope\""}`},
		{"/swaps?from=deposit:nope", 404, `{"error":"from: unknown entity \"nope\" in deposit:nope"}`},
		{"/swaps?senders=type:nope", 400, `{"error":"senders: type:nope ` + types},
		{"/swaps?receivers=!deposit:nope", 404, `{"error":"receivers: unknown entity \"nope\" in deposit:nope"}`},
		{"/swaps?tokens=nope", 404, `{"error":"tokens: unknown token \"nope\""}`},
		{"/swaps?tokens=0x9999999999999999999999999999999999999999", 200, `{"swaps":[],"count":0}`},
		{"/counterparties/entity/binance?tokens=nope", 404, `{"error":"tokens: unknown token \"nope\""}`},
		{"/counterparties/address/" + tw.U1 + "?tokens=nope", 404, `{"error":"tokens: unknown token \"nope\""}`},
		{"/counterparties/entity/binance?tokens=0x9999999999999999999999999999999999999999", 200, `{}`},

		{"/transfers?chains=bitcoin&base=" + tw.U1, 404, notOnBitcoin("base")},
		{"/transfers?chains=bitcoin&from=" + tw.U1, 404, notOnBitcoin("from")},
		{"/transfers?chains=bitcoin&to=!" + tw.U1, 404, notOnBitcoin("to")},
		{"/transfers?chains=bitcoin&base=binance&counterparties=" + tw.U1, 404, notOnBitcoin("counterparties")},
		{"/transfers?chains=bitcoin,solana&base=binance", 200, empty},
		{"/transfers/histogram?chains=bitcoin&base=" + tw.U1, 404, notOnBitcoin("base")},
		{"/transfers/histogram/simple?chains=bitcoin&base=" + tw.U1, 404, notOnBitcoin("base")},
		{"/swaps?chains=bitcoin&base=" + tw.U1, 404, notOnBitcoin("base")},
		{"/swaps?chains=bitcoin&senders=" + tw.U1, 404, notOnBitcoin("senders")},
		{"/counterparties/address/" + tw.U1 + "?chains=bitcoin", 404, notOnBitcoin("address")},
		{"/counterparties/entity/binance?chains=bitcoin", 200, `{}`},
		{"/flow/address/" + tw.U1 + "?chains=bitcoin", 404, notOnBitcoin("address")},
		{"/flow/entity/binance?chains=bitcoin", 200, `{}`},
		{"/volume/address/" + tw.U1 + "?chains=bitcoin", 404, notOnBitcoin("address")},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			w := serve(r, &alice, "GET", c.path, "")
			if w.Code != c.status || w.Body.String() != c.body {
				t.Fatalf("got %d %s\nwant %d %s", w.Code, w.Body.String(), c.status, c.body)
			}
		})
	}
}
