package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// A freshly published exchange deposit travels Kafka → transfers → edge → client (how soon is
// logged, not asserted): the exchange's attribution (as intelligence publishes it on intel.attributions.v1) makes the
// deposit address part of the exchange, and base=<exchange>&flow=in returns the deposit.
func TestTransfersExchangeDepositThroughEdge(t *testing.T) {
	p := Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Heavy routes allow one call a second per key: wait out a 429 as a client would.
	heavy := func(path string) Response {
		for {
			r := p.Get(t, path)
			if r.Status != 429 {
				return r
			}
			wait, _ := strconv.Atoi(r.Header.Get("Retry-After"))
			time.Sleep(time.Duration(max(wait, 1)) * time.Second)
		}
	}
	ex := "e2e-exchange-" + randHex(4)
	hot, deposit, customer := "0x"+randHex(20), "0x"+randHex(20), "0x"+randHex(20)
	version := time.Now().UnixMilli()
	entity := &eventsv1.Entity{Id: ex, Name: "E2E Exchange", Type: "cex"}
	p.Publish(t, ctx,
		eventbus.Event{Topic: eventsv1.TopicAttributions, Key: eventsv1.AttributionKey("evm", hot),
			Msg: &eventsv1.Attribution{ChainType: "evm", Address: hot, Entity: entity, Label: "Hot Wallet", Version: version, UpdatedAtMs: version}},
		eventbus.Event{Topic: eventsv1.TopicAttributions, Key: eventsv1.AttributionKey("evm", deposit),
			Msg: &eventsv1.Attribution{ChainType: "evm", Address: deposit, Entity: entity, Label: "Deposit", DepositServiceId: ex, Version: version, UpdatedAtMs: version}},
	)
	// Let the attribution land first: a relabel is what makes the entity resolve.
	Eventually(t, 60*time.Second, func() error {
		r := heavy("/transfers?base=" + ex)
		if r.Status != 200 {
			return fmt.Errorf("base=%s: %d %s", ex, r.Status, r.Body)
		}
		return nil
	})

	txHash := "0x" + randHex(32)
	blockTime := time.Now().Truncate(time.Second)
	usd := 1234.5
	sent := time.Now()
	p.Publish(t, ctx,
		eventbus.Event{Topic: eventsv1.TopicTransactions, Key: eventsv1.ChainKey("ethereum", txHash), Msg: &eventsv1.Transaction{
			Chain: "ethereum", Hash: txHash, BlockNumber: 19000000, BlockHash: "0x" + randHex(32), BlockTimeMs: blockTime.UnixMilli(),
			From: customer, To: deposit, Nonce: 7, Success: true, Value: "500000000000000000", GasUsed: 21000,
			GasPrice: "30000000000", EffectiveGasPrice: "30000000000", Fee: "630000000000000", ValueUsd: &usd}},
		eventbus.Event{Topic: eventsv1.TopicTransfers, Key: eventsv1.ChainKey("ethereum", txHash), Msg: &eventsv1.Transfer{
			Id: txHash + "_ext", Chain: "ethereum", TransactionHash: txHash, BlockHash: "0x" + randHex(32), BlockNumber: 19000000,
			BlockTimeMs: blockTime.UnixMilli(), From: customer, To: deposit, TokenId: "ethereum", TokenName: "Ether", TokenSymbol: "ETH",
			TokenDecimals: 18, Amount: "500000000000000000", HistoricalUsd: &usd, Type: eventsv1.TransferType_TRANSFER_TYPE_EXTERNAL}},
	)
	var list struct {
		Transfers []struct {
			ID        string  `json:"id"`
			UnitValue float64 `json:"unitValue"`
			USD       float64 `json:"historicalUSD"`
			To        struct {
				Address          string `json:"address"`
				DepositServiceID string `json:"depositServiceID"`
				ServiceEntity    struct {
					ID string `json:"id"`
				} `json:"serviceEntity"`
			} `json:"toAddress"`
		} `json:"transfers"`
		Count int `json:"count"`
	}
	var last Response
	Eventually(t, 60*time.Second, func() error {
		last = p.Get(t, "/transfers?base="+ex+"&flow=in")
		if last.Status == 429 {
			return fmt.Errorf("rate limited")
		}
		if last.Status != 200 {
			return fmt.Errorf("%d %s", last.Status, last.Body)
		}
		last.JSON(t, &list)
		if list.Count != 1 || len(list.Transfers) != 1 {
			return fmt.Errorf("not there yet: %s", last.Body)
		}
		return nil
	})
	t.Logf("deposit visible through the edge %s after publishing", time.Since(sent).Round(time.Millisecond))
	got := list.Transfers[0]
	if got.ID != txHash+"_ext" || got.UnitValue != 0.5 || got.USD != usd || got.To.Address != deposit ||
		got.To.DepositServiceID != ex || got.To.ServiceEntity.ID != ex {
		t.Fatalf("deposit: %s", last.Body)
	}
	if c := last.Header.Get("X-Credits-Used"); c != "" && c != "2" {
		t.Errorf("X-Credits-Used %q for one row, want 2", c)
	}
	if last.Header.Get("X-Chainintel-Rows") != "" {
		t.Error("the edge leaked the row-count header")
	}

	// The same deposit through the other routes.
	var tx map[string]struct {
		Status    string `json:"status"`
		Transfers []any  `json:"transfers"`
	}
	// Transactions come on their own topic, so they may land a moment after the transfer.
	Eventually(t, 60*time.Second, func() error {
		r := p.Get(t, "/tx/"+txHash)
		if r.Status != 200 {
			return fmt.Errorf("/tx: %d %s", r.Status, r.Body)
		}
		if r.JSON(t, &tx); tx["ethereum"].Status != "success" || len(tx["ethereum"].Transfers) != 1 {
			return fmt.Errorf("/tx: %s", r.Body)
		}
		return nil
	})
	var r Response
	if r := p.Get(t, "/tx/0x"+randHex(32)); r.Status != 404 {
		t.Fatalf("/tx unknown: %d %s", r.Status, r.Body)
	}
	var hist []struct {
		Count int     `json:"count"`
		USD   float64 `json:"usd"`
	}
	// The rollups are applied a moment after the rows are stored (TRANSFERS_ROLLUPS=queued), all
	// in one transaction: once the histogram has the deposit, counterparties and flow have it.
	Eventually(t, 60*time.Second, func() error {
		r := heavy("/transfers/histogram?base=" + ex + "&flow=in&timeLast=2d")
		if r.JSON(t, &hist); r.Status != 200 || len(hist) == 0 || hist[len(hist)-1].Count != 1 || hist[len(hist)-1].USD != usd {
			return fmt.Errorf("histogram: %d %s", r.Status, r.Body)
		}
		return nil
	})
	r = p.Do(t, "GET", "/transfers/histogram/simple?base="+url.QueryEscape(ex)+"&flow=in", "", nil)
	if r.Status != 200 {
		t.Fatalf("public histogram: %d %s", r.Status, r.Body)
	}
	var cps map[string][]struct {
		Address struct {
			Address string `json:"address"`
		} `json:"address"`
		Flow string `json:"flow"`
	}
	r = heavy("/counterparties/entity/" + ex)
	if r.JSON(t, &cps); r.Status != 200 || len(cps["ethereum"]) != 1 || cps["ethereum"][0].Address.Address != customer || cps["ethereum"][0].Flow != "in" {
		t.Fatalf("counterparties: %d %s", r.Status, r.Body)
	}
	var flow map[string][]struct {
		Inflow float64 `json:"inflow"`
	}
	r = p.Get(t, "/flow/entity/"+ex)
	if r.JSON(t, &flow); r.Status != 200 || len(flow["ethereum"]) != 1 || flow["ethereum"][0].Inflow != usd {
		t.Fatalf("flow: %d %s", r.Status, r.Body)
	}
	if r := heavy("/transfers?base=" + ex + "&offset=9999&limit=2"); r.Status != 400 || r.Error() == "" {
		t.Fatalf("offset past 10000: %d %s", r.Status, r.Body)
	}
	if r := heavy("/transfers?limit=" + strconv.Itoa(1001)); r.Status != 400 {
		t.Fatalf("limit 1001: %d %s", r.Status, r.Body)
	}
}
