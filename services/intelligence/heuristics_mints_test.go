package intelligence

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
	"github.com/chainintel/chainintel/services/intelligence/internal/heuristics"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// TestHeuristicsIgnoreMints: mints are transfers from the zero address. Deposit addresses of
// two exchanges each receive a customer's payment and a minted token, and sweep to their
// exchange; a token treasury receives only mints and funds a hot wallet; the zero address also
// mints straight to a hot wallet. The zero address joins nothing: two clusters (customer and
// deposit address), none across the exchanges, the zero address without clusterIds and never a
// deposit address, and the treasury, which no one but the zero address paid, not one either.
func TestHeuristicsIgnoreMints(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	cfg := testConfig(t)
	zero := addr(0)
	hotA, hotB, c1, c2, da, db, treasury := addr(0x100), addr(0x200), addr(0xc1), addr(0xc2), addr(0xda), addr(0xdb), addr(0x77)
	_, err := ImportCurated(ctx, cfg, strings.NewReader(`{"entities":[{"id":"acme","name":"Acme","type":"cex"},{"id":"bolt","name":"Bolt","type":"cex"}],
		"addresses":[{"chainType":"evm","address":"`+hotA+`","entity":"acme","label":"Hot"},{"chainType":"evm","address":"`+hotB+`","entity":"bolt","label":"Hot"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(pgtest.Pool(t))
	tr := func(id, from, to string, ms int64) *eventsv1.Transfer {
		return &eventsv1.Transfer{Id: id, Chain: "ethereum", From: from, To: to, BlockTimeMs: ms, HistoricalUsd: usd(10), Amount: "1"}
	}
	if err := (events.Handlers{Store: st}).Transfers(ctx, msgs(eventsv1.TopicTransfers,
		tr("a", c1, da, 1000), tr("b", zero, da, 2000), tr("c", da, hotA, 3000),
		tr("d", c2, db, 4000), tr("e", zero, db, 5000), tr("f", db, hotB, 6000),
		tr("g", zero, treasury, 7000), tr("h", treasury, hotA, 8000), tr("i", zero, hotA, 9000))); err != nil {
		t.Fatal(err)
	}
	cands, err := st.SweepCandidates(ctx, []string{"cex"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cands {
		if c.Address == zero {
			t.Errorf("the zero address is a sweep candidate: %+v", c)
		}
		if c.Address == treasury && c.Senders != 0 {
			t.Errorf("the treasury's mints count as %d senders", c.Senders)
		}
	}
	sum, err := heuristics.Run(ctx, st, heuristics.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range sum.Deposits {
		got = append(got, d.Address+"→"+d.Exchange)
	}
	want := []string{da + "→acme", db + "→bolt"}
	if fmt.Sprint(got) != fmt.Sprint(want) || sum.Clusters != 2 || sum.Clustered != 4 {
		t.Fatalf("heuristics: deposits %v, %d clusters of %d addresses; want %v in 2 clusters of 4", got, sum.Clusters, sum.Clustered, want)
	}
	clusters := heuristics.Clusters(sum.Deposits, mustSenders(t, st, da, db))
	if clusters["evm:"+zero] != "" || clusters["evm:"+da] == clusters["evm:"+db] || clusters["evm:"+c1] != clusters["evm:"+da] {
		t.Fatalf("clusters: %v", clusters)
	}
	api := newTestAPI(t, nil, nil)
	caller := &httpx.Identity{KeyID: "k1", UserID: "u1", Role: httpx.RoleIndividual, Tier: "api"}
	code, body := api.do(t, "GET", "/intelligence/address_enriched/"+zero, "", caller)
	if code != 200 {
		t.Fatal(code, body)
	}
	assertJSON(t, "zero address", body, `{"address":"`+zero+`","chain":"ethereum","contract":false,"isUserAddress":false,"populatedTags":[],"clusterIds":[]}`)
}
