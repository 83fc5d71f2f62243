package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	"github.com/chainintel/chainintel/services/transfers/internal/events"
	svchttp "github.com/chainintel/chainintel/services/transfers/internal/http"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
	"github.com/chainintel/chainintel/services/transfers/migrations"
	"github.com/chainintel/chainintel/sim"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A simulated bitcoin transaction, stored through the consumers' handlers in a database of its
// own: its /tx answer's value, valueExact and usd are the BTC its one output (transfer) pays and
// that transfer's historicalUSD, not 0. Whole body.
func TestUTXOTransactionValue(t *testing.T) {
	e := world(t) // the user-labels service the router renders with
	w, err := sim.New(sim.Config{Seed: 1, Chains: []string{"bitcoin"}, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	w.Bootstrap()
	b := w.Next(20)
	var tx *eventsv1.Transaction
	var tr *eventsv1.Transfer
	for _, x := range b.Transfers {
		if x.Chain == "bitcoin" {
			tr = x
			break
		}
	}
	for _, x := range b.Transactions {
		if tr != nil && x.Hash == tr.TransactionHash {
			tx = x
		}
	}
	if tx == nil {
		t.Fatal("the simulator made no bitcoin transaction with a transfer")
	}

	ctx := context.Background()
	dbURL, drop, err := pgtest.CreateDatabase(ctx, "utxovalue")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close(); drop() })
	if err := pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil); err != nil {
		t.Fatal(err)
	}
	o := store.DefaultOptions()
	o.InlineRollups = true
	st := store.New(pool, o)
	h := events.Handlers{W: st, Log: slog.New(slog.DiscardHandler)}
	if err := h.Transactions(ctx, tw.Msgs(b.Transactions)); err != nil {
		t.Fatal(err)
	}
	if err := h.Transfers(ctx, tw.Msgs(b.Transfers)); err != nil {
		t.Fatal(err)
	}
	cs, _ := chains.NewSet(nil)
	r := httpx.NewEngine(httpx.EngineOptions{Service: "transfers"})
	r.Use(httpx.IdentityMiddleware(httpx.NewSigner(secret)))
	svchttp.Register(r, app.New(st, e.render, cs), query.Parser{Chains: cs, Now: func() time.Time { return tw.Now }})

	num := func(f float64) string { s, _ := json.Marshal(f); return string(s) }
	btc := func(units string) string { // satoshis as BTC, the nearest float64
		v, _ := new(big.Rat).SetString(units + "/100000000")
		f, _ := v.Float64()
		return num(f)
	}
	info := func(a string) string {
		return `{"address":"` + a + `","chain":"bitcoin","contract":false,"isUserAddress":false}`
	}
	at := time.UnixMilli(tr.BlockTimeMs).UTC().Format(time.RFC3339)
	transfer := fmt.Sprintf(`{"id":%q,"transactionHash":%q,"blockHash":%q,"blockNumber":%d,"blockTimestamp":%q,"chain":"bitcoin",
	  "fromAddress":%s,"toAddress":%s,"fromIsContract":false,"toIsContract":false,"tokenId":"bitcoin","tokenName":"Bitcoin",
	  "tokenSymbol":"BTC","tokenDecimals":8,"unitValue":%s,"historicalUSD":%s,"type":"external"}`,
		tr.Id, tr.TransactionHash, tr.BlockHash, tr.BlockNumber, at, info(tr.From), info(tr.To), btc(tr.Amount), num(*tr.HistoricalUsd))
	// value, valueExact and usd are the transfer's: the transaction moves what its output pays.
	want := fmt.Sprintf(`{"bitcoin":{"hash":%q,"chain":"bitcoin","blockNumber":%d,"blockHash":%q,"blockTimestamp":%q,
	  "from":%s,"to":%s,"nonce":%d,"status":"success","value":%s,"valueExact":%q,"usd":%s,"gasUsed":%d,"gasPrice":%s,
	  "effectiveGasPrice":%s,"fee":%s,"feeUsd":%s,"transfers":[%s]}}`,
		tx.Hash, tx.BlockNumber, tx.BlockHash, at, info(tr.From), info(tr.To), tx.Nonce, btc(tr.Amount), tr.Amount,
		num(*tr.HistoricalUsd), tx.GasUsed, tx.GasPrice, tx.EffectiveGasPrice, btc(tx.Fee), num(*tx.FeeUsd), transfer)
	got := serve(r, &bob, "GET", "/tx/"+tx.Hash, "")
	sameJSON(t, resp{got.Code, got.Header(), got.Body.Bytes()}, 200, want)
}
