package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// The transfers service's public-API parity routes through the edge: a customer deposits to an
// exchange three times in one transaction and withdraws once; /transfers/tx/{hash},
// /transfers/unenriched paged by cursor, /volume/address and /volume/entity answer with them.
func TestTransfersParityRoutesThroughEdge(t *testing.T) {
	p := Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
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
	ex := "e2e-parity-" + randHex(4)
	hot, deposit, customer := "0x"+randHex(20), "0x"+randHex(20), "0x"+randHex(20)
	version := time.Now().UnixMilli()
	entity := &eventsv1.Entity{Id: ex, Name: "Parity Exchange", Type: "cex"}
	p.Publish(t, ctx,
		eventbus.Event{Topic: eventsv1.TopicAttributions, Key: eventsv1.AttributionKey("evm", hot),
			Msg: &eventsv1.Attribution{ChainType: "evm", Address: hot, Entity: entity, Label: "Hot Wallet", Version: version, UpdatedAtMs: version}},
		eventbus.Event{Topic: eventsv1.TopicAttributions, Key: eventsv1.AttributionKey("evm", deposit),
			Msg: &eventsv1.Attribution{ChainType: "evm", Address: deposit, Entity: entity, DepositServiceId: ex, Version: version, UpdatedAtMs: version}},
	)
	Eventually(t, 10*time.Second, func() error {
		if r := p.Get(t, "/volume/entity/"+ex); r.Status != 200 {
			return fmt.Errorf("volume of %s: %d %s", ex, r.Status, r.Body)
		}
		return nil
	})
	dep, wd := "0x"+randHex(32), "0x"+randHex(32)
	at := time.Now().Add(-time.Hour).Truncate(time.Hour) // both transfers on one day
	usd := 100.0
	var events []eventbus.Event
	tr := func(hash string, i int, from, to string, at time.Time) eventbus.Event {
		return eventbus.Event{Topic: eventsv1.TopicTransfers, Key: eventsv1.ChainKey("ethereum", hash), Msg: &eventsv1.Transfer{
			Id: fmt.Sprintf("%s_%d", hash, i), Chain: "ethereum", TransactionHash: hash, BlockHash: "0x" + hash[2:], BlockNumber: 19000001,
			BlockTimeMs: at.UnixMilli(), From: from, To: to, TokenId: "ethereum", TokenName: "Ether", TokenSymbol: "ETH", TokenDecimals: 18,
			Amount: "1000000000000000000", HistoricalUsd: &usd, Type: eventsv1.TransferType_TRANSFER_TYPE_TOKEN, LogIndex: uint32(i)}}
	}
	for _, h := range []string{dep, wd} {
		events = append(events, eventbus.Event{Topic: eventsv1.TopicTransactions, Key: eventsv1.ChainKey("ethereum", h), Msg: &eventsv1.Transaction{
			Chain: "ethereum", Hash: h, BlockNumber: 19000001, BlockHash: "0x" + h[2:], BlockTimeMs: at.UnixMilli(), From: customer, To: deposit,
			Success: true, Value: "0", GasUsed: 21000, GasPrice: "1", EffectiveGasPrice: "1", Fee: "21000"}})
	}
	events = append(events, tr(dep, 1, customer, deposit, at), tr(dep, 2, customer, deposit, at), tr(dep, 3, customer, deposit, at),
		tr(wd, 1, hot, customer, at.Add(time.Second)))
	p.Publish(t, ctx, events...)

	var txs []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		To   struct {
			DepositServiceID string `json:"depositServiceID"`
		} `json:"toAddress"`
	}
	Eventually(t, 30*time.Second, func() error {
		r := p.Get(t, "/transfers/tx/"+dep+"?chain=ethereum&transferType=token")
		if r.Status != 200 {
			return fmt.Errorf("/transfers/tx: %d %s", r.Status, r.Body)
		}
		if r.JSON(t, &txs); len(txs) != 3 || txs[0].ID != dep+"_1" || txs[2].To.DepositServiceID != ex {
			return fmt.Errorf("/transfers/tx: %d %s", r.Status, r.Body)
		}
		return nil
	})

	// Unenriched, two a page, by cursor: the four transfers once each, no attribution, one
	// credit a row.
	type page struct {
		Transfers []struct {
			ID   string         `json:"id"`
			From map[string]any `json:"fromAddress"`
			To   map[string]any `json:"toAddress"`
		} `json:"transfers"`
		NextCursor string `json:"nextCursor"`
	}
	var seen []string
	q := url.Values{"base": {customer}, "limit": {"2"}, "includeCursors": {"true"}}
	for turn := 0; turn < 4; turn++ {
		r := heavy("/transfers/unenriched?" + q.Encode())
		var pg page
		if r.JSON(t, &pg); r.Status != 200 {
			t.Fatalf("unenriched: %d %s", r.Status, r.Body)
		}
		if c := r.Header.Get("X-Credits-Used"); c != "" && c != strconv.Itoa(len(pg.Transfers)) {
			t.Errorf("X-Credits-Used %q for %d rows, want one a row", c, len(pg.Transfers))
		}
		for _, x := range pg.Transfers {
			seen = append(seen, x.ID)
			if x.To["serviceEntity"] != nil || x.From["serviceEntity"] != nil || x.To["depositServiceID"] != nil {
				t.Errorf("unenriched transfer carries attribution: %s", r.Body)
			}
		}
		if pg.NextCursor == "" {
			break
		}
		q.Set("cursor", pg.NextCursor)
	}
	if want := []string{wd + "_1", dep + "_3", dep + "_2", dep + "_1"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("unenriched paged %v, want %v", seen, want)
	}

	// Volume comes from the rollups, applied a moment after the rows.
	type volumes map[string][]struct {
		Volumes []struct {
			ExchangeID   string  `json:"exchangeID"`
			ExchangeName string  `json:"exchangeName"`
			WithdrawnUSD float64 `json:"withdrawnUSD"`
			DepositedUSD float64 `json:"depositedUSD"`
		} `json:"volumes"`
	}
	Eventually(t, 30*time.Second, func() error {
		var v volumes
		r := heavy("/volume/address/" + customer)
		if r.Status != 200 {
			return fmt.Errorf("volume of the customer: %d %s", r.Status, r.Body)
		}
		if r.JSON(t, &v); len(v["ethereum"]) != 1 || len(v["ethereum"][0].Volumes) != 1 {
			return fmt.Errorf("volume of the customer: %d %s", r.Status, r.Body)
		}
		got := v["ethereum"][0].Volumes[0]
		if got.ExchangeID != ex || got.ExchangeName != "Parity Exchange" || got.DepositedUSD != 300 || got.WithdrawnUSD != 100 {
			return fmt.Errorf("volume of the customer: %s", r.Body)
		}
		return nil
	})
	if r := heavy("/volume/entity/" + ex); r.Status != 200 || string(r.Body) != "{}" {
		t.Fatalf("the exchange's volume with itself: %d %s", r.Status, r.Body)
	}
	if r := p.Get(t, "/transfers/tx/"+dep+"?transferType=erc20"); r.Status != 400 || r.Error() == "" {
		t.Fatalf("bad transferType: %d %s", r.Status, r.Body)
	}
}
