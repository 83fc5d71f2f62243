package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	intelligence "github.com/chainintel/chainintel/services/intelligence"
	"github.com/chainintel/chainintel/services/intelligence/client"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
	"github.com/chainintel/chainintel/services/intelligence/internal/inteltest"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

func TestMain(m *testing.M) { os.Exit(inteltest.Main(m)) }

const secret = "intelligence-client-test-secret"

func addr(n int) string { return fmt.Sprintf("0x%040x", n) }

// The tags an operator curated: addr(1) is "hot" and "kyc", addr(2) "kyc", addr(1500) "hot"
// (past the first batch of a long list), and addr(3) "bridge", a tag of base only.
var curated = `{"entities":[{"id":"binance","name":"Binance","type":"cex"},{"id":"quiet","name":"Quiet","type":"miner"}],
  "addresses":[
    {"chainType":"evm","address":"` + addr(1) + `","entity":"binance","tags":[{"id":"hot","params":""},{"id":"kyc","params":"tier 1"}]},
    {"chainType":"evm","address":"` + addr(2) + `","tags":[{"id":"kyc","params":"tier 2"}]},
    {"chainType":"evm","address":"` + addr(1500) + `","tags":[{"id":"hot","params":""}]},
    {"chainType":"evm","address":"` + addr(3) + `","tags":[{"id":"bridge","params":""}]}],
  "tags":[{"id":"hot","label":"Hot wallet","rank":1},{"id":"kyc","label":"KYC {param}","rank":2},
    {"id":"bridge","label":"Bridge","rank":3,"chain":"base"}]}`

// server runs the real intelligence router (serving ethereum and base) over the package
// database with the curated tags imported, and returns a client of it.
func server(t *testing.T) *client.Client {
	t.Helper()
	return serverWith(t, nil)
}

// serverWith is server with ul as the service's user-labels.
func serverWith(t *testing.T, ul app.UserLabels) *client.Client {
	t.Helper()
	c, _ := serve(t, ul)
	return c
}

// serve is serverWith that also returns the service's URL.
func serve(t *testing.T, ul app.UserLabels) (*client.Client, string) {
	t.Helper()
	ctx := context.Background()
	var cfg intelligence.Config
	cfg.DatabaseURL = pgtest.URL(t)
	if _, err := intelligence.ImportCurated(ctx, cfg, strings.NewReader(curated)); err != nil {
		t.Fatal(err)
	}
	set, err := chains.NewSet([]string{"ethereum", "base"})
	if err != nil {
		t.Fatal(err)
	}
	signer := httpx.NewSigner(secret)
	srv := httptest.NewServer(inteltest.Router(t, intelligence.Name, signer, &app.Service{Chains: set, UserLabels: ul}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, signer, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, srv.URL
}

func caller() context.Context {
	return httpx.WithIdentity(context.Background(), httpx.Identity{KeyID: "k-alice", UserID: "alice", OrgID: "org", Role: httpx.RoleOrgMember, Tier: "api"})
}

func TestTagsAgainstTheService(t *testing.T) {
	c := server(t)
	ctx := caller()

	// Each address's own tags on the chain asked, keyed as given; untagged addresses absent,
	// a tag of another chain left out.
	got, err := c.Tags(ctx, "ethereum", []string{addr(1), addr(2), addr(3), addr(9)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{addr(1): {"hot", "kyc"}, addr(2): {"kyc"}}
	if !reflect.DeepEqual(sorted(got), want) {
		t.Fatalf("ethereum tags: %v, want %v", got, want)
	}
	got, err = c.Tags(ctx, "base", []string{addr(3)})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]string{addr(3): {"bridge"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("base tags: %v, want %v", got, want)
	}

	// An address the chain does not accept is not asked about (intelligence would refuse the
	// whole batch): the others still answer.
	got, err = c.Tags(ctx, "ethereum", []string{"not-an-address", addr(2)})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]string{addr(2): {"kyc"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("with an invalid address: %v, want %v", got, want)
	}

	// A list longer than a batch is asked in batches: the tagged address past the first is found.
	long := make([]string, 0, 1600)
	for i := 1; i <= 1600; i++ {
		long = append(long, addr(i))
	}
	got, err = c.Tags(ctx, "ethereum", long)
	if err != nil {
		t.Fatal(err)
	}
	want = map[string][]string{addr(1): {"hot", "kyc"}, addr(2): {"kyc"}, addr(1500): {"hot"}}
	if !reflect.DeepEqual(sorted(got), want) {
		t.Fatalf("1,600 addresses: %v, want %v", got, want)
	}
	if got, err := c.Tags(ctx, "ethereum", nil); err != nil || len(got) != 0 {
		t.Fatalf("no addresses: %v %v, want none and no error", got, err)
	}
}

// Tags reads only the tags: no user-labels lookup for the caller (an enriched batch for the
// same caller would be a user-labels outage), so user-labels being down does not fail it.
func TestTagsReadNoUserLabels(t *testing.T) {
	dead := httptest.NewServer(nil)
	dead.Close()
	ul, err := ulclient.New(dead.URL, httpx.NewSigner(secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := serverWith(t, ul)
	got, err := c.Tags(caller(), "ethereum", []string{addr(1), addr(2), addr(9)})
	if err != nil {
		t.Fatalf("user-labels down: %v, want the tags", err)
	}
	if want := map[string][]string{addr(1): {"hot", "kyc"}, addr(2): {"kyc"}}; !reflect.DeepEqual(sorted(got), want) {
		t.Fatalf("user-labels down: %v, want %v", got, want)
	}
}

// Entities knows an entity without attributed addresses (quiet) as well as one with them, not an
// id intelligence does not hold, and lists every entity type.
func TestEntities(t *testing.T) {
	c := server(t)
	got, err := c.Entities(caller(), []string{"binance", "quiet", "nope", "quiet"})
	if err != nil {
		t.Fatal(err)
	}
	want := client.Entities{Known: map[string]bool{"binance": true, "quiet": true}, Types: []string{"cex", "miner"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if got, err = c.Entities(caller(), nil); err != nil || !reflect.DeepEqual(got, client.Entities{Known: map[string]bool{}, Types: []string{"cex", "miner"}}) {
		t.Fatalf("no ids: %+v %v, want the types", got, err)
	}
}

// MaxBatch is intelligence's own batch limit: its batch routes take MaxBatch addresses and
// refuse one more whole (400 naming addresses), so Tags's chunks are never refused.
func TestMaxBatchIsTheServiceLimit(t *testing.T) {
	_, url := serve(t, nil)
	signer := httpx.NewSigner(secret)
	id, _ := httpx.IdentityFrom(caller())
	for _, path := range []string{"/internal/tags?chain=ethereum", "/intelligence/address/batch?chain=ethereum"} {
		for _, n := range []int{client.MaxBatch, client.MaxBatch + 1} {
			addrs := make([]string, n)
			for i := range addrs {
				addrs[i] = addr(i + 1)
			}
			body, _ := json.Marshal(map[string]any{"addresses": addrs})
			req, _ := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			signer.Sign(req.Header, id, time.Now())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case n == client.MaxBatch && resp.StatusCode != http.StatusOK:
				t.Errorf("%s with %d addresses: %d %s, want 200", path, n, resp.StatusCode, got)
			case n > client.MaxBatch && (resp.StatusCode != http.StatusBadRequest ||
				string(got) != fmt.Sprintf(`{"error":"addresses: at most %d addresses per call, got %d"}`, client.MaxBatch, n)):
				t.Errorf("%s with %d addresses: %d %s, want 400 naming addresses", path, n, resp.StatusCode, got)
			}
		}
	}
}

// Whatever intelligence refuses (a chain it does not serve), the caller's request was valid:
// the client fails with the dependency unavailable (a 503 naming intelligence); a service
// that does not answer fails too.
func TestTagsFailures(t *testing.T) {
	c := server(t)
	_, err := c.Tags(caller(), "polygon", []string{addr(1)})
	var ue *httpx.UnavailableError
	if !errors.As(err, &ue) || ue.Dependency != "intelligence" {
		t.Fatalf("a chain intelligence does not serve: %v, want intelligence unavailable", err)
	}

	srv := httptest.NewServer(nil)
	url := srv.URL
	srv.Close()
	down, err := client.New(url, httpx.NewSigner(secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := down.Tags(caller(), "ethereum", []string{addr(1)}); err == nil {
		t.Fatal("intelligence down: no error")
	}
}

// sorted returns m with each list sorted (the order of an address's tags is not part of the answer).
func sorted(m map[string][]string) map[string][]string {
	out := map[string][]string{}
	for k, v := range m {
		out[k] = slices.Sorted(slices.Values(v))
	}
	return out
}
