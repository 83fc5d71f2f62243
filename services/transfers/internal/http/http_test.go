package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	"github.com/chainintel/chainintel/services/transfers/internal/events"
	svchttp "github.com/chainintel/chainintel/services/transfers/internal/http"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
	"github.com/chainintel/chainintel/services/transfers/migrations"
	userlabels "github.com/chainintel/chainintel/services/user-labels"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
	ulmigrations "github.com/chainintel/chainintel/services/user-labels/migrations"
	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		if err := pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil); err != nil {
			return err
		}
		return pgstore.Migrate(ctx, pool, ulmigrations.Schema, ulmigrations.FS, nil)
	}))
}

const secret = "transfers-test-internal-secret"

// Callers: alice owns labels and a user entity; bob has none.
var (
	alice = httpx.Identity{KeyID: "k-alice", UserID: "u-alice", Role: httpx.RoleIndividual, Tier: "api"}
	bob   = httpx.Identity{KeyID: "k-bob", UserID: "u-bob", Role: httpx.RoleIndividual, Tier: "api"}
)

type env struct {
	router      *gin.Engine
	store       *store.Store
	opts        store.Options // of store and router (build)
	pool        *pgxpool.Pool
	render      app.UserLabels
	handlers    events.Handlers
	ulURL       string
	aliceEntity string // alice's user entity {U1, U2}
}

var (
	setupOnce sync.Once
	theEnv    *env
	setupErr  error
)

// world starts the real user-labels service, loads the known world through the consumers'
// handlers, creates alice's labels and entity, and returns the transfers router.
func world(t *testing.T) *env {
	t.Helper()
	setupOnce.Do(func() { theEnv, setupErr = setup(t) })
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return theEnv
}

func setup(t *testing.T) (*env, error) {
	ctx := context.Background()
	broker, err := eventbus.StartEmbeddedBroker(0)
	if err != nil {
		return nil, err
	}
	if err := eventbus.EnsureTopics(ctx, broker.Addrs(), eventbus.Security{}, 1, []eventbus.TopicSpec{{Name: "user.changes.v1", Partitions: 1}}); err != nil {
		return nil, err
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ops, _ := net.Listen("tcp", "127.0.0.1:0")
	var uc userlabels.Config
	uc.Base = service.Base{InternalSecret: secret, ShutdownTimeout: 5 * time.Second, LogLevel: "error"}
	uc.Postgres = service.Postgres{DatabaseURL: pgtest.URL(t), MaxConns: 4}
	uc.Kafka = service.Kafka{Brokers: broker.Addrs(), Partitions: 1, ReplicationFactor: 1}
	uc.OutboxPollInterval, uc.OutboxRetention = time.Second, time.Hour
	go func() {
		_ = userlabels.Run(ctx, uc, service.Deps{Logger: slog.New(slog.DiscardHandler), HTTPListener: ln, OpsListener: ops})
	}()
	e := &env{ulURL: "http://" + ln.Addr().String()}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(e.ulURL + "/internal/shared/entities/00000000-0000-0000-0000-000000000000")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(50 * time.Millisecond)
	}
	signer := httpx.NewSigner(secret)
	ul := func(method, path string, body any, out any) error {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, e.ulURL+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		signer.Sign(req.Header, alice, time.Now())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("user-labels %s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		if out != nil {
			return json.Unmarshal(raw, out)
		}
		return nil
	}
	if err := ul("POST", "/user/labels", []map[string]string{{"name": "Bob's wallet", "note": "", "address": tw.U2, "chainType": "evm"}}, nil); err != nil {
		return nil, err
	}
	var created []ulclient.UserEntity
	if err := ul("POST", "/user/entities", map[string]any{"name": "My desk", "note": "mine",
		"addresses": map[string][]string{"evm": {tw.U1, tw.U2}}}, &created); err != nil {
		return nil, err
	}
	e.aliceEntity = created[0].ID
	// alice adds the fund to binance (only_add): only her base=binance includes it.
	if err := ul("PUT", "/user/entities/only_add/binance", map[string]any{"addresses": map[string][]string{"evm": {tw.F}}}, nil); err != nil {
		return nil, err
	}

	e.pool = pgtest.Pool(t)
	// The service's options but for rollups applied inline: a read after a write sees it.
	o := store.DefaultOptions()
	o.InlineRollups = true
	e.store = store.New(e.pool, o)
	e.handlers = events.Handlers{W: e.store, Log: slog.New(slog.DiscardHandler)}
	if err := tw.Load(ctx, e.handlers); err != nil {
		return nil, err
	}
	client, err := ulclient.New(e.ulURL, signer, nil)
	if err != nil {
		return nil, err
	}
	e.render = app.NewLabelCache(client, time.Minute, 1000)
	e.build(o)
	return e, nil
}

// build makes the env's router over its store, whose options are o.
func (e *env) build(o store.Options) {
	e.opts = o
	cs, _ := chains.NewSet(nil)
	e.router = httpx.NewEngine(httpx.EngineOptions{Service: "transfers"})
	e.router.Use(httpx.IdentityMiddleware(httpx.NewSigner(secret)))
	svchttp.Register(e.router, app.New(e.store, e.render, cs),
		query.Parser{Chains: cs, Now: func() time.Time { return tw.Now }})
}

// plans serves the world with edits to the current options (plan thresholds, group sizes) until
// the returned function restores them; calls nest.
func plans(t *testing.T, edits ...func(*store.Options)) (restore func()) {
	t.Helper()
	e := world(t)
	old := e.opts
	o := old
	for _, f := range edits {
		f(&o)
	}
	e.store = store.New(e.pool, o)
	e.build(o)
	return func() {
		e.store = store.New(e.pool, old)
		e.build(old)
	}
}

// largeSets plans every address set as a large one (listed sets: none; per-address LATERAL
// reads: up to lateral addresses).
func largeSets(lateral int) func(*store.Options) {
	return func(o *store.Options) { o.ListSetMax, o.LateralMax = 0, lateral }
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (e *env) get(t *testing.T, who *httpx.Identity, path string) resp {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if who != nil {
		httpx.NewSigner(secret).Sign(req.Header, *who, time.Now())
	}
	w := httptest.NewRecorder()
	e.router.ServeHTTP(w, req)
	return resp{w.Code, w.Header(), w.Body.Bytes()}
}

func ids(t *testing.T, body []byte) ([]string, int) {
	t.Helper()
	var out struct {
		Transfers []struct {
			ID string `json:"id"`
		} `json:"transfers"`
		Count int `json:"count"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("not a transfer list: %s", body)
	}
	var s []string
	for _, x := range out.Transfers {
		s = append(s, x.ID)
	}
	return s, out.Count
}

func names(s []string) string {
	inv := map[string]string{}
	for _, n := range []string{"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10"} {
		inv[tw.ID(n)] = n
	}
	var out []string
	for _, id := range s {
		if n, ok := inv[id]; ok {
			out = append(out, n)
		} else {
			out = append(out, id)
		}
	}
	return strings.Join(out, ",")
}

// Every filter of /transfers and their combinations, against the known world; then again with
// every address set planned as a large one (joined, hashed, index hidden) and without the
// per-address LATERAL plan, which must not change a single answer.
func TestTransferFilters(t *testing.T) {
	t.Run("small-set plans", testTransferFilters)
	t.Run("large-set plans", func(t *testing.T) {
		defer plans(t, largeSets(0))()
		testTransferFilters(t)
	})
	t.Run("lateral plans", func(t *testing.T) {
		defer plans(t, largeSets(1000))()
		testTransferFilters(t)
	})
	t.Run("entity-rollup plans", func(t *testing.T) {
		defer plans(t, largeSets(0))()
		defer liveGroups(t)()
		testTransferFilters(t)
	})
	t.Run("entity-rollup plans, other sides probed", func(t *testing.T) {
		defer plans(t, largeSets(0))()
		defer plans(t, func(o *store.Options) { o.PairJoinMax = -1 })()
		defer liveGroups(t)()
		testTransferFilters(t)
	})
}

// liveGroups makes every attribution group of the world live (its rollups built), so sets
// that are one entity, type or deposit service are read through them; the returned function
// restores the default.
func liveGroups(t *testing.T) (restore func()) {
	t.Helper()
	e := world(t)
	back := plans(t, func(o *store.Options) { o.GroupMin = 0 })
	rematerialize := func() {
		if err := e.store.Rematerialize(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	rematerialize()
	return func() {
		back()
		rematerialize()
	}
}

func testTransferFilters(t *testing.T) {
	e := world(t)
	ms := func(d time.Duration) string { return jsonInt(tw.D0.Add(d).UnixMilli()) }
	cases := []struct {
		name, query string
		who         *httpx.Identity
		want        string // transfer names in order
		count       int    // -1: len(want)
	}{
		{"everything newest first", "", nil, "t10,t9,t8,t7,t6,t5,t4,t3,t2,t1", -1},
		{"everything oldest first", "sortDir=asc", nil, "t1,t2,t3,t4,t5,t6,t7,t8,t9,t10", -1},
		{"entity base, all flows", "base=binance", nil, "t6,t3,t2,t1", -1},
		{"entity base in (deposit counts, sweep is self)", "base=binance&flow=in", nil, "t1", -1},
		{"entity base out", "base=binance&flow=out", nil, "t6,t3", -1},
		{"entity base self", "base=binance&flow=self", nil, "t2", -1},
		{"address base out excludes self transfer", "base=" + tw.U1 + "&flow=out", nil, "t9,t1", -1},
		{"address base self", "base=" + tw.U1 + "&flow=self", nil, "t10", -1},
		{"address base in: none", "base=" + tw.U1 + "&flow=in", nil, "", -1},
		{"address base self on one chain", "base=" + tw.U1 + "&flow=self&chains=ethereum", nil, "t10", -1},
		{"address base on one chain", "base=" + tw.U1 + "&chains=base", nil, "t9", -1},
		{"address base, one token", "base=" + tw.U1 + "&tokens=" + tw.USDC, nil, "t1", -1},
		{"address base self, another chain: none", "base=" + tw.U1 + "&flow=self&chains=base", nil, "", -1},
		{"two bases", "base=coinbase," + tw.F, nil, "t8,t7,t6,t5,t4", -1},
		{"two entities", "base=binance,coinbase", nil, "t6,t5,t4,t3,t2,t1", -1},
		{"two entities in (from outside both)", "base=binance,coinbase&flow=in", nil, "t4,t1", -1},
		{"two entities out (to outside both)", "base=binance,coinbase&flow=out", nil, "t3", -1},
		{"two entities self (between them too)", "base=coinbase,binance&flow=self", nil, "t6,t5,t2", -1},
		{"two entities, one chain, last page", "base=binance,coinbase&chains=ethereum&limit=2&offset=2", nil, "t2,t1", 4},
		{"two entities oldest first, a page across both", "base=binance,coinbase&sortDir=asc&limit=2&offset=3", nil, "t4,t5", 6},
		{"three entities in (the fund's pool swap is between two of them)", "base=binance,uniswap,a16z&flow=in", nil, "t1", -1},
		{"three entities self", "base=binance,uniswap,a16z&flow=self", nil, "t8,t7,t2", -1},
		{"three entities out", "base=binance,uniswap,a16z&flow=out", nil, "t6,t3", -1},
		{"to an entity type", "base=binance&flow=out&to=type:cex", nil, "t6", -1},
		{"to deposit addresses of binance", "to=deposit:binance", nil, "t1", -1},
		{"to deposit addresses of coinbase", "to=deposit:coinbase", nil, "t4", -1},
		{"excluding cex senders", "from=!type:cex", nil, "t10,t9,t8,t7,t4,t1", -1},
		{"to a type from outside it", "to=type:cex&from=!type:cex", nil, "t4,t1", -1},
		{"from a type to outside it", "from=type:cex&to=!type:cex", nil, "t3", -1},
		{"within a type", "from=type:cex&to=type:cex", nil, "t6,t5,t2", -1},
		{"neither side a type", "from=!type:cex&to=!type:cex", nil, "t10,t9,t8,t7", -1},
		{"from a type to an entity", "from=type:cex&to=coinbase", nil, "t6,t5", -1},
		{"from entity to entity", "from=binance&to=coinbase", nil, "t6", -1},
		{"from an entity (out and self)", "from=binance", nil, "t6,t3,t2", -1},
		{"from an entity, oldest first, a page", "from=binance&sortDir=asc&limit=2&offset=1", nil, "t3,t6", 3},
		{"from an entity, usd range", "from=binance&usdGte=2000", nil, "t6,t3", -1},
		{"from an entity sorted by value", "from=binance&sortKey=value", nil, "t2,t6,t3", -1},
		{"to an entity (in and self)", "to=binance", nil, "t2,t1", -1},
		{"to another entity", "to=coinbase", nil, "t6,t5,t4", -1},
		{"to an entity, usd range", "to=coinbase&usdLte=5000", nil, "t5,t4", -1},
		{"from an entity, its self transfer only", "from=coinbase", nil, "t5", -1},
		{"from an entity, not to another", "from=binance&to=!coinbase", nil, "t3,t2", -1},
		{"from an entity, not to another, oldest first, a page", "from=binance&to=!coinbase&sortDir=asc&limit=1&offset=1", nil, "t3", 2},
		{"from an entity's deposits to it (the sweep)", "from=deposit:binance&to=binance", nil, "t2", -1},
		{"to an entity, not from its deposits, usd range", "to=binance&from=!deposit:binance&usdGte=500", nil, "t1", -1},
		{"from an entity to a type (its own sweep included)", "from=binance&to=type:cex", nil, "t6,t2", -1},
		{"from deposits to their own entity", "from=deposit:binance&to=binance", nil, "t2", -1},
		{"from an entity to another's deposits: none", "from=binance&to=deposit:coinbase", nil, "", -1},
		{"from a type to a type it never sent to", "from=type:cex&to=type:fund", nil, "", -1},
		{"from a type to an entity, oldest first, second page", "from=type:cex&to=coinbase&sortDir=asc&limit=1&offset=1", nil, "t6", 2},
		{"from an entity to a type, usd range", "from=binance&to=type:cex&usdLte=5000", nil, "t2", -1},
		{"from an entity to a type, cut hours", "from=binance&to=type:cex&timeGte=" + ms(11*time.Hour+30*time.Minute) + "&timeLte=" + ms(12*time.Hour+30*time.Minute), nil, "t2", -1},
		{"from an entity to a type, one token", "from=binance&to=type:cex&tokens=ethereum", nil, "t6", -1},
		{"from an entity to a type, usd floor", "from=binance&to=type:cex&usdGte=100", nil, "t6,t2", -1},
		{"from an entity to outside a type", "from=binance&to=!type:cex", nil, "t3", -1},
		{"from outside a type to an entity", "from=!type:cex&to=coinbase", nil, "t4", -1},
		{"from outside a type to an entity, usd floor", "from=!type:cex&to=binance&usdGte=100", nil, "t1", -1},
		{"from a type to an entity, usd floor", "from=type:cex&to=coinbase&usdGte=100", nil, "t6,t5", -1},
		{"from either of two types to an entity, usd floor", "from=type:dex,type:cex&to=coinbase&usdGte=100", nil, "t6,t5", -1},
		{"from a type to outside it, usd floor", "from=type:cex&to=!type:cex&usdGte=100", nil, "t3", -1},
		{"from an entity's deposit addresses to a type", "from=deposit:binance&to=type:cex", nil, "t2", -1},
		{"from an entity's deposit addresses to a type, usd floor", "from=deposit:binance&to=type:cex&usdGte=100", nil, "t2", -1},
		{"from an entity's deposit addresses to outside a type", "from=deposit:binance&to=!type:cex", nil, "", -1},
		{"to an entity's deposit addresses from outside a type", "to=deposit:coinbase&from=!type:cex", nil, "t4", -1},
		{"to an entity's deposit addresses from outside a type, usd floor", "to=deposit:binance&from=!type:cex&usdGte=100", nil, "t1", -1},
		{"to an entity's deposit addresses from another entity", "to=deposit:coinbase&from=binance", nil, "", -1},
		{"from an entity's deposit addresses to an address", "from=deposit:coinbase&to=" + tw.H2 + "&usdGte=100", nil, "t5", -1},
		{"from address, excluding binance deposits", "from=" + tw.U1 + "&to=!deposit:binance", nil, "t10,t9", -1},
		{"from list with exclusion", "from=" + tw.U1 + "," + tw.U2 + "&to=!" + tw.U1, nil, "t9,t4,t1", -1},
		{"deposit addresses of an entity that has none match nothing", "to=deposit:a16z", nil, "", -1},
		{"counterparty address", "base=binance&counterparties=" + tw.U2, nil, "t3", -1},
		{"counterparty entity", "base=binance&counterparties=coinbase", nil, "t6", -1},
		{"counterparty with flow in", "base=coinbase&flow=in&counterparties=binance", nil, "t6", -1},
		{"one chain", "chains=base", nil, "t9,t5,t4", -1},
		{"two chains", "chains=base,ethereum&base=" + tw.U2, nil, "t9,t4,t3", -1},
		{"token by pricing id", "tokens=usd-coin", nil, "t8,t5,t4,t2,t1", -1},
		{"token by contract (checksummed)", "tokens=0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", nil, "t8,t5,t4,t2,t1", -1},
		{"native coin by pricing id on two chains", "tokens=ethereum", nil, "t10,t9,t6,t3", -1},
		{"two tokens", "tokens=weth,ethereum&chains=ethereum", nil, "t10,t7,t6,t3", -1},
		{"time range", "timeGte=" + ms(24*time.Hour) + "&timeLte=" + ms(72*time.Hour), nil, "t6,t5,t4,t3", -1},
		{"time range RFC 3339, inclusive bounds", "timeGte=2026-01-01T10:00:00Z&timeLte=2026-01-01T12:00:00Z", nil, "t2,t1", -1},
		{"time last", "timeLast=7d", nil, "t10,t9,t8,t7,t6,t5", -1},
		{"usd range", "usdGte=1000&usdLte=5000", nil, "t10,t3,t2,t1", -1},
		{"value range in token units", "valueGte=500&valueLte=1000", nil, "t5,t4,t2,t1", -1},
		{"value below one unit", "valueLte=0.5", nil, "t9", -1},
		{"usd sort desc, unknown price last", "sortKey=usd", nil, "t6,t7,t8,t3,t10,t2,t1,t5,t4,t9", -1},
		{"usd sort asc, unknown price first", "sortKey=usd&sortDir=asc", nil, "t9,t4,t5,t1,t2,t10,t3,t8,t7,t6", -1},
		{"value sort asc", "sortKey=value&sortDir=asc", nil, "t9,t10,t3,t7,t6,t4,t5,t1,t2,t8", -1},
		{"value sort desc with base", "sortKey=value&base=binance", nil, "t2,t1,t6,t3", -1},
		{"usd sort with entity base and usdGte", "sortKey=usd&base=binance&usdGte=2000", nil, "t6,t3", -1},
		{"combined: entity, flow, token, chain, time", "base=binance&flow=all&tokens=usd-coin&chains=ethereum&timeLte=" + ms(11*time.Hour), nil, "t1", -1},
		{"page", "limit=3&offset=2", nil, "t8,t7,t6", 10},
		{"page past the end", "limit=5&offset=8", nil, "t2,t1", 10},
		{"last allowed window", "limit=2&offset=9998", nil, "", 10},
		{"page of a union (flow all) ascending", "base=binance&sortDir=asc&limit=2&offset=1", nil, "t2,t3", 4},
		{"user entity base (caller's)", "base=ENTITY", &alice, "t10,t9,t4,t3,t1", -1},
		{"user entity base self", "base=ENTITY&flow=self", &alice, "t10,t9", -1},
		{"caller's only_add additions join the operator entity", "base=binance&flow=out", &alice, "t7,t6,t3", -1},
		{"another caller does not see them", "base=binance&flow=out", &bob, "t6,t3", -1},
		{"caller's additions with the operator entity, all flows", "base=binance", &alice, "t8,t7,t6,t3,t2,t1", -1},
		{"caller's additions with the operator entity, second page", "base=binance&limit=2&offset=2", &alice, "t6,t3", 6},
		{"an entity and an address", "base=binance," + tw.U1, nil, "t10,t9,t6,t3,t2,t1", -1},
		{"an entity and an address, oldest first, usd floor", "base=binance," + tw.U1 + "&sortDir=asc&usdGte=1500", nil, "t3,t6,t10", -1},
		{"an entity and an address, in: the address's deposit stays inside", "base=binance," + tw.U1 + "&flow=in", nil, "", -1},
		{"an entity and an address, out", "base=binance," + tw.U1 + "&flow=out", nil, "t9,t6,t3", -1},
		{"an entity and an address, out, oldest first, second page", "base=binance," + tw.U1 + "&flow=out&sortDir=asc&limit=2&offset=1", nil, "t6,t9", 3},
		{"an entity and an address, self", "base=binance," + tw.U1 + "&flow=self", nil, "t10,t2,t1", -1},
		{"caller's additions with the operator entity, in", "base=binance&flow=in", &alice, "t8,t1", -1},
		{"caller's additions with the operator entity, in, last 12 hours of the pool swap's day", "base=binance&flow=in&timeGte=" + ms(79*time.Hour+30*time.Minute) + "&timeLte=" + ms(80*time.Hour+30*time.Minute), &alice, "t8", -1},
		{"caller's additions with the operator entity, in, within one hour", "base=binance&flow=in&timeGte=" + ms(80*time.Hour) + "&timeLte=" + ms(80*time.Hour+30*time.Minute), &alice, "t8", -1},
		{"caller's additions with the operator entity, self", "base=binance&flow=self", &alice, "t2", -1},
		{"an entity and two addresses, self", "base=binance," + tw.U1 + "," + tw.U2 + "&flow=self", nil, "t10,t9,t3,t2,t1", -1},
		{"an entity and two addresses, self, oldest first, a page across both parts", "base=binance," + tw.U1 + "," + tw.U2 + "&flow=self&sortDir=asc&limit=2&offset=1", nil, "t2,t3", 5},
		{"an entity and two addresses, out to one of them stays inside", "base=binance," + tw.U1 + "," + tw.U2 + "&flow=out", nil, "t6,t4", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.get(t, c.who, "/transfers?"+strings.ReplaceAll(c.query, "ENTITY", e.aliceEntity))
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			got, count := ids(t, r.body)
			if names(got) != c.want {
				t.Errorf("got %s, want %s", names(got), c.want)
			}
			want := c.count
			if want < 0 {
				want = len(strings.Split(c.want, ","))
				if c.want == "" {
					want = 0
				}
			}
			if count != want {
				t.Errorf("count %d, want %d", count, want)
			}
			if r.header.Get(httpx.HeaderRows) != jsonInt(int64(len(got))) {
				t.Errorf("%s = %q, want %d", httpx.HeaderRows, r.header.Get(httpx.HeaderRows), len(got))
			}
		})
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// Bad input is a 400 naming the parameter; unknown entities are 404.
func TestTransferErrors(t *testing.T) {
	e := world(t)
	cases := []struct {
		path   string
		status int
		want   string // substring of the error
	}{
		{"/transfers?chains=nochain", 400, "chains: unknown chain \"nochain\""},
		{"/transfers?chains=bitcoin&base=" + tw.U1, 404, "base: address"},
		{"/transfers?base=0x12", 400, "base: invalid evm address"},
		{"/transfers?timeLast=7d&timeGte=1", 400, "timeLast: cannot be combined"},
		{"/transfers?timeLast=7x", 400, "timeLast:"},
		{"/transfers?timeGte=20&timeLte=10", 400, "timeGte: must not be after timeLte"},
		{"/transfers?usdGte=10&usdLte=1", 400, "usdGte: must not be greater than usdLte"},
		{"/transfers?valueGte=abc", 400, "valueGte: must be a number"},
		{"/transfers?sortKey=size", 400, "sortKey: must be one of time, value, usd"},
		{"/transfers?sortDir=up", 400, "sortDir:"},
		{"/transfers?limit=0", 400, "limit: must be between 1 and 1000"},
		{"/transfers?limit=1001", 400, "limit:"},
		{"/transfers?offset=9999&limit=2", 400, "offset: offset + limit must be at most 10000"},
		{"/transfers?flow=in", 400, "flow: is relative to base"},
		{"/transfers?flow=sideways&base=binance", 400, "flow: must be one of"},
		{"/transfers?counterparties=binance", 400, "counterparties: selects transfers between base"},
		{"/transfers?base=!binance", 400, "base: a leading !"},
		{"/transfers?base=type:cex", 400, "base: type: references are only allowed in from and to"},
		{"/transfers?from=type:CEX!", 400, "from: type:"},
		{"/transfers?tokens=not%20a%20token", 400, "tokens:"},
		{"/transfers?base=nosuchentity", 404, "base: unknown entity \"nosuchentity\""},
		{"/transfers?base=8f0e2c55-1111-4222-8333-944455556666", 404, "unknown entity"},
		{"/transfers/histogram?granularity=1h", 400, "granularity: 1h covers at most 30 days"},
		{"/transfers/histogram?granularity=1h&timeLast=31d", 400, "granularity:"},
		{"/transfers/histogram?granularity=1w", 400, "granularity: must be one of 1h, 1d"},
		{"/swaps?flow=both&base=" + tw.U1, 400, "flow: must be one of in, out, self, all"},
		{"/swaps?sortKey=amount", 400, "sortKey: must be one of time, value, usd"},
		{"/tx/not-a-hash!", 400, "hash:"},
		{"/tx/" + tw.TxHash(999), 404, "not found on any chain"},
		{"/counterparties/address/nope", 404, "not an address"},
		{"/counterparties/entity/nosuch", 404, "unknown entity"},
		{"/counterparties/entity/binance?flow=all", 400, "flow: must be one of in, out, either"},
		{"/counterparties/entity/binance?limit=5000", 400, "limit:"},
		{"/flow/entity/Not_An_Entity", 404, "unknown entity"},
		{"/flow/address/" + tw.U1 + "?timeLast=1d&timeLte=5", 400, "timeLast:"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			r := e.get(t, &alice, c.path)
			var body struct {
				Error string `json:"error"`
			}
			_ = json.Unmarshal(r.body, &body)
			if r.status != c.status || !strings.Contains(body.Error, c.want) {
				t.Fatalf("got %d %s, want %d with %q", r.status, r.body, c.status, c.want)
			}
		})
	}
}
