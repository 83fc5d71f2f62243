package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/user-labels/client"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	svchttp "github.com/chainintel/chainintel/services/user-labels/internal/http"
	"github.com/chainintel/chainintel/services/user-labels/internal/store"
	"github.com/chainintel/chainintel/services/user-labels/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

// server runs the real user-labels router over the real store and returns a client of it and
// the service (to create data as a user would).
func server(t *testing.T) (*client.Client, *app.Service) {
	t.Helper()
	signer := httpx.NewSigner("client-test-secret-0123")
	svc := app.New(store.New(pgtest.Pool(t)), app.NewChainTypes(nil))
	e := httpx.NewEngine(httpx.EngineOptions{Service: "user-labels", MaxBodyBytes: svchttp.MaxInternalBodyBytes})
	e.Use(httpx.IdentityMiddleware(signer))
	svchttp.Register(e, svc)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, svc
}

func as(user string) context.Context {
	return httpx.WithIdentity(context.Background(), httpx.Identity{KeyID: "k-" + user, UserID: user, OrgID: "org", Role: httpx.RoleOrgMember, Tier: "api"})
}

func addr(n int) string { return fmt.Sprintf("0x%040x", n+1) }

func TestClientAgainstTheService(t *testing.T) {
	c, svc := server(t)
	alice, bob := as("alice"), as("bob")

	if _, err := svc.PutLabels(alice, "alice", []app.LabelInput{
		{Name: "a1", Note: "n", Address: addr(1), ChainType: "evm"},
		{Name: "a2", Note: "", Address: "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", ChainType: "bitcoin"},
	}); err != nil {
		t.Fatal(err)
	}
	es, err := svc.CreateEntities(alice, "alice", []app.EntityBody{
		{Name: "desk", Note: "otc", Addresses: map[string][]string{"evm": {addr(1), addr(2)}}},
		{Name: "pub", Addresses: map[string][]string{"evm": {addr(3)}}, Shareable: new(true)},
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	desk, pub := es[0], es[1]
	if _, err := svc.AddAddresses(alice, "alice", "binance", map[string][]string{"evm": {addr(7)}}); err != nil {
		t.Fatal(err)
	}

	// Lookup: keyed as asked.
	got, err := c.Lookup(alice, []client.AddressRef{
		{ChainType: "evm", Address: addr(1)}, {ChainType: "evm", Address: addr(2)},
		{ChainType: "bitcoin", Address: "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"}, {ChainType: "evm", Address: addr(9)},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := client.Lookup{
		Labels: map[string]client.Label{
			"evm:" + addr(1): {Name: "a1", Note: "n"},
			"bitcoin:1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa": {Name: "a2"},
		},
		Entities: map[string][]client.EntityRef{
			"evm:" + addr(1): {{ID: desk.ID, Name: "desk", Note: "otc"}},
			"evm:" + addr(2): {{ID: desk.ID, Name: "desk", Note: "otc"}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("lookup\n got %+v\nwant %+v", got, want)
	}
	// Bob sees none of it; without a caller there is no call and nothing.
	for _, ctx := range []context.Context{bob, context.Background()} {
		got, err = c.Lookup(ctx, []client.AddressRef{{ChainType: "evm", Address: addr(1)}})
		if err != nil || len(got.Labels) != 0 || len(got.Entities) != 0 {
			t.Fatalf("lookup of another caller: %+v %v", got, err)
		}
	}

	// Entity: the caller's own, with addresses; someone else's or unknown is ErrNotFound.
	e, err := c.Entity(alice, desk.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantE := client.UserEntity{ID: desk.ID, Name: "desk", Note: "otc", Type: "user", Addresses: map[string][]string{"evm": {addr(1), addr(2)}},
		CreatedAt: desk.CreatedAt, UpdatedAt: desk.UpdatedAt}
	if !reflect.DeepEqual(e, wantE) {
		t.Fatalf("entity\n got %+v\nwant %+v", e, wantE)
	}
	for _, tc := range []struct {
		ctx context.Context
		id  string
	}{{bob, desk.ID}, {alice, "00000000-0000-4000-8000-000000000000"}, {alice, "binance"}, {context.Background(), desk.ID}} {
		if _, err := c.Entity(tc.ctx, tc.id); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("Entity(%s): %v, want ErrNotFound", tc.id, err)
		}
	}

	// Entities: the caller's among the ids in one call, keyed by lower-case id; others absent.
	many, err := c.Entities(alice, []string{strings.ToUpper(desk.ID), "00000000-0000-4000-8000-000000000000", "binance", desk.ID})
	if err != nil || !reflect.DeepEqual(many, map[string]client.UserEntity{desk.ID: wantE}) {
		t.Fatalf("entities: %+v %v", many, err)
	}
	for _, ctx := range []context.Context{bob, context.Background()} {
		if many, err := c.Entities(ctx, []string{desk.ID}); err != nil || len(many) != 0 {
			t.Fatalf("entities of another caller: %+v %v", many, err)
		}
	}

	// AdditionsOf: the caller's additions to the operator entities asked about, in one call.
	adds, err := c.AdditionsOf(alice, []string{"binance", "kraken", desk.ID, "binance"})
	if err != nil || !reflect.DeepEqual(adds, map[string]map[string][]string{"binance": {"evm": {addr(7)}}}) {
		t.Fatalf("additions of: %+v %v", adds, err)
	}
	if adds, err := c.AdditionsOf(bob, []string{"binance"}); err != nil || len(adds) != 0 {
		t.Fatalf("additions of another caller: %+v %v", adds, err)
	}

	// SharedEntity needs no caller and only finds shareable entities.
	s, err := c.SharedEntity(context.Background(), pub.ID)
	if err != nil || s.ID != pub.ID || !s.Shareable || !reflect.DeepEqual(s.Addresses, map[string][]string{"evm": {addr(3)}}) {
		t.Fatalf("shared entity: %+v %v", s, err)
	}
	if _, err := c.SharedEntity(context.Background(), desk.ID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("shared lookup of a private entity: %v", err)
	}

	// Additions.
	add, err := c.Additions(alice, "binance")
	if err != nil || !reflect.DeepEqual(add, map[string][]string{"evm": {addr(7)}}) {
		t.Fatalf("additions: %v %v", add, err)
	}
	add, err = c.Additions(bob, "binance")
	if err != nil || len(add) != 0 {
		t.Fatalf("additions of another caller: %v %v", add, err)
	}
	add, err = c.Additions(context.Background(), "binance")
	if err != nil || len(add) != 0 {
		t.Fatalf("additions without a caller: %v %v", add, err)
	}

	// A lookup with additions carries the caller's additions to every operator entity, even for
	// no addresses; another caller's has none.
	if _, err := svc.AddAddresses(alice, "alice", "kraken", map[string][]string{"evm": {addr(8), addr(5)}}); err != nil {
		t.Fatal(err)
	}
	got, err = c.LookupWithAdditions(alice, []client.AddressRef{{ChainType: "evm", Address: addr(2)}})
	want = client.Lookup{Labels: map[string]client.Label{},
		Entities:  map[string][]client.EntityRef{"evm:" + addr(2): {{ID: desk.ID, Name: "desk", Note: "otc"}}},
		Additions: map[string]map[string][]string{"binance": {"evm": {addr(7)}}, "kraken": {"evm": {addr(5), addr(8)}}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("lookup with additions\n got %+v %v\nwant %+v", got, err, want)
	}
	if got, err = c.LookupWithAdditions(alice, nil); err != nil || !reflect.DeepEqual(got.Additions, want.Additions) {
		t.Fatalf("lookup of no addresses with additions: %+v %v", got, err)
	}
	for _, ctx := range []context.Context{bob, context.Background()} {
		if got, err = c.LookupWithAdditions(ctx, nil); err != nil || got.Additions != nil {
			t.Fatalf("lookup with additions of another caller: %+v %v", got, err)
		}
	}
}

// A lookup of more than MaxLookupBatch addresses is split into several calls.
func TestClientLookupSplitsBigBatches(t *testing.T) {
	c, svc := server(t)
	ctx := as("carol")
	if _, err := svc.PutLabels(ctx, "carol", []app.LabelInput{
		{Name: "first", Address: addr(0), ChainType: "evm"},
		{Name: "last", Address: addr(client.MaxLookupBatch + 500), ChainType: "evm"},
	}); err != nil {
		t.Fatal(err)
	}
	refs := make([]client.AddressRef, client.MaxLookupBatch+501)
	for i := range refs {
		refs[i] = client.AddressRef{ChainType: "evm", Address: addr(i)}
	}
	got, err := c.Lookup(ctx, refs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]client.Label{"evm:" + addr(0): {Name: "first"}, "evm:" + addr(client.MaxLookupBatch+500): {Name: "last"}}
	if !reflect.DeepEqual(got.Labels, want) {
		t.Fatalf("labels %+v", got.Labels)
	}
}
