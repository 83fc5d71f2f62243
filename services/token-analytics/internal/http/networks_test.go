package http

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// GET /networks/history/{chain}: the daily quotes of the chain's native coin over the last
// year, oldest first; hourly points and older days are not part of it; an unknown chain is a
// 400 naming the parameter.
func TestNetworkHistory(t *testing.T) {
	e := newEnv(t, app.Native{})
	day := now.UTC().Truncate(24 * time.Hour)
	e.prices(
		app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: day.Add(-400 * 24 * time.Hour), Price: 1},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: day.Add(-2 * 24 * time.Hour), Price: 3000, MarketCap: ptr(3.6e11), Volume: ptr(2e10)},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: day.Add(-24 * time.Hour), Price: 3100.5},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Hourly, Time: day.Add(time.Hour), Price: 3200},
		app.PricePoint{PricingID: "binancecoin", Granularity: app.Daily, Time: day.Add(-24 * time.Hour), Price: 600},
	)
	d := func(n int) string { return day.Add(time.Duration(-n) * 24 * time.Hour).Format(time.RFC3339) }
	e.expect("/networks/history/ethereum", 200, `[
		{"time":"`+d(2)+`","usd":3000,"volume24h":2e10,"marketCap":3.6e11},
		{"time":"`+d(1)+`","usd":3100.5,"volume24h":0,"marketCap":0}]`)
	e.expect("/networks/history/optimism", 200, `[
		{"time":"`+d(2)+`","usd":3000,"volume24h":2e10,"marketCap":3.6e11},
		{"time":"`+d(1)+`","usd":3100.5,"volume24h":0,"marketCap":0}]`)
	e.expect("/networks/history/bsc?unknown=1", 200, `[{"time":"`+d(1)+`","usd":600,"volume24h":0,"marketCap":0}]`)
	e.expect("/networks/history/polygon", 200, `[]`)
	e.expect("/networks/history/nochain", 400, `{"error":"chain: unknown chain \"nochain\""}`)
}

// txs delivers chain.transactions.v1 records of one block: one per transaction index, with a
// gas price in gwei ("" for none).
func (e *env) txs(chain, block string, number uint64, at time.Time, gwei string, indexes ...uint32) {
	e.t.Helper()
	var batch []eventbus.Message[*eventsv1.Transaction]
	for _, i := range indexes {
		price := ""
		if gwei != "" {
			price = gwei + "000000000"
		}
		batch = append(batch, eventbus.Message[*eventsv1.Transaction]{Msg: &eventsv1.Transaction{Chain: chain,
			Hash: fmt.Sprintf("%s_%d", block, i), BlockHash: block, BlockNumber: number, BlockTimeMs: at.UnixMilli(),
			TxIndex: i, EffectiveGasPrice: price}})
	}
	if err := e.ev.Transactions(context.Background(), batch); err != nil {
		e.t.Fatal(err)
	}
}

// GET /networks/status: per chain with a block, the tip (an orphaned block is not one), the
// transactions per second after the oldest block of the hour up to the tip, the mean of the
// hour's blocks' lowest gas prices in gwei, the transfers of the 24 hours up to the tip and the
// native quote with its change over 24 hours; a chain without a quote has price fields 0 and a
// null asOf.price; a chain whose tip is over an hour old is not active. Redelivered and partial
// blocks count once.
func TestNetworkStatus(t *testing.T) {
	e := newEnv(t, app.Native{})
	tip := now.Add(-10 * time.Minute)
	e.txs("ethereum", "0xa1", 100, tip.Add(-2*time.Hour), "10", 0, 1, 2, 3, 4)
	e.txs("ethereum", "0xa2", 101, tip.Add(-50*time.Minute), "30", 0, 3)
	e.txs("ethereum", "0xa2", 101, tip.Add(-50*time.Minute), "20", 1, 2)
	e.txs("ethereum", "0xa3", 102, tip.Add(-20*time.Minute), "40", 9, 0)
	e.txs("ethereum", "0xa4", 103, tip, "30", 0, 5, 2)
	e.txs("ethereum", "0xa4", 103, tip, "30", 0, 5, 2)
	e.txs("ethereum", "0xa5", 104, tip.Add(12*time.Second), "1", 0, 1, 2)
	if err := e.ev.Reorgs(context.Background(), []eventbus.Message[*eventsv1.Reorg]{{Msg: &eventsv1.Reorg{Chain: "ethereum",
		Orphaned: []*eventsv1.Reorg_Block{{Number: 104, Hash: "0xa5"}}}}}); err != nil {
		t.Fatal(err)
	}
	e.txs("bsc", "0xb1", 7, now.Add(-3*time.Hour), "", 0)
	e.send(transfer{id: "0xt1_1", from: "0x01", to: "0x02", usd: 5, units: 1, at: tip.Add(-30 * time.Minute)},
		transfer{id: "0xt2_1", from: "0x01", to: "0x02", usd: 5, units: 1, at: tip.Add(-31 * time.Minute)},
		transfer{id: "0xt3_1", from: "0x01", to: "0x02", usd: 5, units: 1, at: tip.Add(-25 * time.Hour)})
	e.tokens(app.TokenUpdate{PricingID: "ethereum", Name: "Ether", Symbol: "ETH"})
	hour := now.Truncate(time.Hour)
	e.prices(app.PricePoint{PricingID: "ethereum", Granularity: app.Hourly, Time: hour.Add(-24 * time.Hour), Price: 2900},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Hourly, Time: hour, Price: 3000, MarketCap: ptr(3.6e11)},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Tick, Time: hour, Price: 3000, MarketCap: ptr(3.6e11), Volume: ptr(2e10)})
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	e.expect("/networks/status?unknown=1", 200, `{
		"ethereum":{"chain":"ethereum","active":true,"price":3000,"priceChange24h":100,"priceChange24hPercent":3.4483,
			"volume":2e10,"marketCap":3.6e11,"tip":103,"tps":0.0053,"transfers":2,"gasFee":30,"satFee":null,
			"asOf":{"fee":"`+ts(tip)+`","price":"`+ts(hour)+`","tip":"`+ts(tip)+`","transfers":"`+ts(tip.Add(-30*time.Minute).Truncate(time.Hour))+`"}},
		"bsc":{"chain":"bsc","active":false,"price":0,"priceChange24h":0,"priceChange24hPercent":0,
			"volume":0,"marketCap":0,"tip":7,"tps":0,"transfers":0,"gasFee":null,"satFee":null,
			"asOf":{"fee":null,"price":null,"tip":"`+ts(now.Add(-3*time.Hour))+`","transfers":"`+ts(now.Add(-3*time.Hour))+`"}}}`)

	// The orphaned block back on the chain is the tip again.
	if err := e.ev.Reorgs(context.Background(), []eventbus.Message[*eventsv1.Reorg]{{Msg: &eventsv1.Reorg{Chain: "ethereum",
		Canonical: []*eventsv1.Reorg_Block{{Number: 104, Hash: "0xa5"}}}}}); err != nil {
		t.Fatal(err)
	}
	code, body := e.get("/networks/status")
	var st map[string]struct{ Tip uint64 }
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil || st["ethereum"].Tip != 104 {
		t.Fatalf("after the block came back: %d %s", code, body)
	}
}

// GET /networks/status with no block ingested is an empty object.
func TestNetworkStatusEmpty(t *testing.T) {
	e := newEnv(t, app.Native{})
	e.expect("/networks/status", 200, `{}`)
}

// A block claiming a time far in the future (one bad event) is stored but does not prune the
// chain's retained blocks: pruning follows only block times up to the clock plus a small skew.
func TestNetworkBlocksFutureTimeKeepsBlocks(t *testing.T) {
	e := newEnv(t, app.Native{})
	tip := now.Add(-10 * time.Minute)
	e.txs("ethereum", "0xa1", 100, tip.Add(-2*time.Hour), "10", 0, 1)
	e.txs("ethereum", "0xa2", 101, tip.Add(-time.Hour), "20", 0)
	e.txs("ethereum", "0xa3", 102, tip, "30", 0, 1, 2)
	e.txs("ethereum", "0xbad", 99, now.AddDate(30, 0, 0), "5", 0)
	var kept int
	if err := e.store.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM market.network_blocks WHERE chain = 'ethereum' AND block_hash IN ('0xa1', '0xa2', '0xa3')`).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if kept != 3 {
		t.Fatalf("after a far-future block, %d of the 3 retained blocks are left", kept)
	}
	code, body := e.get("/networks/status")
	var st map[string]struct{ Tip uint64 }
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil || st["ethereum"].Tip != 102 {
		t.Fatalf("status after a far-future block: %d %s", code, body)
	}
}

// blocks delivers chain.blocks.v1 records: (hash, number, time, transactions) per block.
func (e *env) blocks(chain string, bs ...*eventsv1.Block) {
	e.t.Helper()
	batch := make([]eventbus.Message[*eventsv1.Block], len(bs))
	for i, b := range bs {
		b.Chain = chain
		batch[i] = eventbus.Message[*eventsv1.Block]{Msg: b}
	}
	if err := e.ev.Blocks(context.Background(), batch); err != nil {
		e.t.Fatal(err)
	}
}

// GET /networks/status reports as the tip the newest indexed block (chain.blocks.v1), an empty
// one too, not the newest block holding a transaction; empty blocks count in the hour's rate
// with no transactions and carry no gas price. A block's transactions arriving before or after
// its block record count once. An orphaned empty tip gives way to the block below it.
func TestNetworkStatusEmptyBlockIsTip(t *testing.T) {
	e := newEnv(t, app.Native{})
	tip := now.Add(-time.Minute)
	e.txs("ethereum", "0xc1", 99, tip.Add(-4*time.Minute), "10", 0, 1)
	e.blocks("ethereum", &eventsv1.Block{Hash: "0xc1", Number: 99, TimeMs: tip.Add(-4 * time.Minute).UnixMilli(), Transactions: 2},
		&eventsv1.Block{Hash: "0xc2", Number: 100, TimeMs: tip.Add(-2 * time.Minute).UnixMilli(), Transactions: 3},
		&eventsv1.Block{Hash: "0xc3", Number: 101, TimeMs: tip.Add(-time.Minute).UnixMilli()},
		&eventsv1.Block{Hash: "0xc4", Number: 102, TimeMs: tip.UnixMilli()})
	e.txs("ethereum", "0xc2", 100, tip.Add(-2*time.Minute), "20", 0, 1, 2)
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	e.expect("/networks/status", 200, `{
		"ethereum":{"chain":"ethereum","active":true,"price":0,"priceChange24h":0,"priceChange24hPercent":0,
			"volume":0,"marketCap":0,"tip":102,"tps":0.0125,"transfers":0,"gasFee":15,"satFee":null,
			"asOf":{"fee":"`+ts(tip.Add(-2*time.Minute))+`","price":null,"tip":"`+ts(tip)+`","transfers":"`+ts(tip)+`"}}}`)

	if err := e.ev.Reorgs(context.Background(), []eventbus.Message[*eventsv1.Reorg]{{Msg: &eventsv1.Reorg{Chain: "ethereum",
		Orphaned: []*eventsv1.Reorg_Block{{Number: 102, Hash: "0xc4"}}}}}); err != nil {
		t.Fatal(err)
	}
	e.expect("/networks/status", 200, `{
		"ethereum":{"chain":"ethereum","active":true,"price":0,"priceChange24h":0,"priceChange24hPercent":0,
			"volume":0,"marketCap":0,"tip":101,"tps":0.0167,"transfers":0,"gasFee":15,"satFee":null,
			"asOf":{"fee":"`+ts(tip.Add(-2*time.Minute))+`","price":null,"tip":"`+ts(tip.Add(-time.Minute))+`","transfers":"`+ts(tip.Add(-time.Minute))+`"}}}`)
}

// GET /networks/status of a UTXO chain (bitcoin) and another non-EVM chain (solana) as the
// simulator publishes them: bitcoin transactions carry a per-vbyte rate in gas_price and a fee
// in satoshis, solana transactions a gas price of 0, none a size. Neither is a gas price in
// gwei, so gasFee is null (not 0) and asOf.fee null; satFee is null because no event carries
// a transaction's virtual size, without which a fee is not a rate in sat/vB.
func TestNetworkStatusNonEVMFees(t *testing.T) {
	e := newEnv(t, app.Native{})
	tip := now.Add(-5 * time.Minute)
	send := func(chain, block string, number uint64, at time.Time, rate, fee string) {
		batch := []eventbus.Message[*eventsv1.Transaction]{{Msg: &eventsv1.Transaction{Chain: chain, Hash: block + "_0",
			BlockHash: block, BlockNumber: number, BlockTimeMs: at.UnixMilli(), GasPrice: rate, EffectiveGasPrice: rate, Fee: fee}}}
		if err := e.ev.Transactions(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	send("bitcoin", "00b1", 875000, tip.Add(-10*time.Minute), "12", "2400")
	send("bitcoin", "00b2", 875001, tip, "30", "6000")
	send("solana", "5o1", 310000000, tip, "0", "5000")
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	e.expect("/networks/status", 200, `{
		"bitcoin":{"chain":"bitcoin","active":true,"price":0,"priceChange24h":0,"priceChange24hPercent":0,
			"volume":0,"marketCap":0,"tip":875001,"tps":0.0017,"transfers":0,"gasFee":null,"satFee":null,
			"asOf":{"fee":null,"price":null,"tip":"`+ts(tip)+`","transfers":"`+ts(tip)+`"}},
		"solana":{"chain":"solana","active":true,"price":0,"priceChange24h":0,"priceChange24hPercent":0,
			"volume":0,"marketCap":0,"tip":310000000,"tps":0,"transfers":0,"gasFee":null,"satFee":null,
			"asOf":{"fee":null,"price":null,"tip":"`+ts(tip)+`","transfers":"`+ts(tip)+`"}}}`)
}
