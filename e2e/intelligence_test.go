package e2e

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/sharedtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence"
)

// intelConfig points intelligence's import functions at the platform's database and brokers.
func intelConfig(t *testing.T, p *Platform) intelligence.Config {
	t.Helper()
	if p.DBURL == "" || len(p.Brokers) == 0 {
		t.Skip("the platform's database and Kafka are not reachable from the test (set CHAININTEL_E2E_DATABASE_URL and CHAININTEL_E2E_KAFKA)")
	}
	var cfg intelligence.Config
	cfg.DatabaseURL, cfg.Kafka = p.DBURL, p.Kafka
	return cfg
}

// intelKey is a key of its own for a test, so that polling does not spend the rate budget of
// the key other tests share.
func intelKey(t *testing.T, p *Platform) (string, func(path string) Response) {
	t.Helper()
	key := p.APIKey
	if p.DBURL != "" {
		key = p.NewKey(t, "api", "org_admin")
	}
	return key, func(path string) Response { return p.Do(t, http.MethodGet, path, key, nil) }
}

type addressInfo struct {
	Address       string `json:"address"`
	Chain         string `json:"chain"`
	ServiceEntity *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"serviceEntity"`
	ServiceLabel *struct {
		Name string `json:"name"`
	} `json:"serviceLabel"`
	PredictedEntity *struct {
		ID string `json:"id"`
	} `json:"predictedEntity"`
	UserLabel *struct {
		Name string `json:"name"`
	} `json:"userLabel"`
	DepositServiceID string `json:"depositServiceID"`
}

// A relabel made with intelligence's import function reaches the transfers service's read model
// through intel.attributions.v1: /transfers through the edge shows the new serviceEntity on a
// transfer touching the address, and intelligence's own address endpoint agrees.
func TestIntelligenceRelabelReachesTransfers(t *testing.T) {
	p := Get(t)
	cfg := intelConfig(t, p)
	_, get := intelKey(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	suffix := randHex(4)
	entA, entB := "e2e-desk-"+suffix, "e2e-fund-"+suffix
	wallet, sender := "0x"+randHex(20), "0x"+randHex(20)
	doc := fmt.Sprintf(`{"entities":[{"id":%q,"name":"E2E Desk","type":"fund"},{"id":%q,"name":"E2E Fund","type":"fund"}],
		"addresses":[{"chainType":"evm","address":%q,"entity":%q,"label":"Desk wallet"}]}`, entA, entB, wallet, entA)
	rep, err := intelligence.ImportCurated(ctx, cfg, strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	// The running service's relay may publish the change before the import's own drain does.
	if rep.AddressesChanged != 1 {
		t.Fatalf("import: %+v", rep)
	}

	txHash := "0x" + randHex(32)
	usd := 42.0
	p.Publish(t, ctx, eventbus.Event{Topic: eventsv1.TopicTransfers, Key: eventsv1.ChainKey("ethereum", txHash), Msg: &eventsv1.Transfer{
		Id: txHash + "_ext", Chain: "ethereum", TransactionHash: txHash, BlockHash: "0x" + randHex(32), BlockNumber: 19000001,
		BlockTimeMs: time.Now().Truncate(time.Second).UnixMilli(), From: sender, To: wallet, TokenId: "ethereum", TokenName: "Ether",
		TokenSymbol: "ETH", TokenDecimals: 18, Amount: "1000000000000000", HistoricalUsd: &usd, Type: eventsv1.TransferType_TRANSFER_TYPE_EXTERNAL}})

	entityOnTransfer := func(want string) func() error {
		return func() error {
			// /transfers is a heavy route: one request a second per key.
			time.Sleep(time.Second)
			r := get("/transfers?base=" + wallet)
			if r.Status != 200 {
				return fmt.Errorf("/transfers: %d %s", r.Status, r.Body)
			}
			var list struct {
				Transfers []struct {
					To addressInfo `json:"toAddress"`
				} `json:"transfers"`
			}
			r.JSON(t, &list)
			if len(list.Transfers) != 1 {
				return fmt.Errorf("transfer not there yet: %s", r.Body)
			}
			if e := list.Transfers[0].To.ServiceEntity; e == nil || e.ID != want {
				return fmt.Errorf("toAddress.serviceEntity is not %s yet: %s", want, r.Body)
			}
			return nil
		}
	}
	Eventually(t, 30*time.Second, entityOnTransfer(entA))

	// Relabel: the curated source now says the wallet is the fund's.
	relabelled := time.Now()
	rep, err = intelligence.ImportCurated(ctx, cfg, strings.NewReader("chain_type,address,entity,label,confidence\nevm,"+wallet+","+entB+",Fund wallet,1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.AddressesChanged != 1 {
		t.Fatalf("relabel: %+v", rep)
	}
	Eventually(t, 30*time.Second, entityOnTransfer(entB))
	t.Logf("relabel visible on /transfers through the edge %s after the import", time.Since(relabelled).Round(time.Millisecond))

	Eventually(t, 60*time.Second, func() error {
		r := get("/intelligence/address/" + wallet)
		var info addressInfo
		if r.JSON(t, &info); r.Status != 200 || info.ServiceEntity == nil || info.ServiceEntity.ID != entB || info.ServiceLabel == nil || info.ServiceLabel.Name != "Fund wallet" {
			return fmt.Errorf("/intelligence/address: %d %s", r.Status, r.Body)
		}
		return nil
	})
}

// The stack imports the GraphSense samples: a known exchange wallet and its entity answer
// through the edge, with credits per API.md.
func TestIntelligenceGraphSenseThroughEdge(t *testing.T) {
	p := Get(t)
	if p.Stack == nil {
		t.Skip("only the local stack imports the GraphSense samples at start (a deployment runs `intelligence import graphsense`)")
	}
	sharedtest.Path(t, "data/labels/graphsense")
	key, get := intelKey(t, p)
	r := get("/intelligence/address/0x28c6c06298d514db089934071355e5743bf21d60")
	var info addressInfo
	if r.JSON(t, &info); r.Status != 200 || info.ServiceEntity == nil || info.ServiceEntity.ID != "binance" || info.Chain != "ethereum" {
		t.Fatalf("binance wallet: %d %s", r.Status, r.Body)
	}
	if c := r.Header.Get("X-Credits-Used"); c != "" && c != "1" {
		t.Errorf("X-Credits-Used %q, want 1", c)
	}
	r = get("/intelligence/entity/binance")
	var ent struct {
		ID            string `json:"id"`
		Type          string `json:"type"`
		PopulatedTags []struct {
			ID string `json:"id"`
		} `json:"populatedTags"`
	}
	if r.JSON(t, &ent); r.Status != 200 || ent.ID != "binance" || ent.Type != "cex" || len(ent.PopulatedTags) == 0 {
		t.Fatalf("binance entity: %d %s", r.Status, r.Body)
	}
	// balances shows the entity with the same populated tags, from intelligence's attribution
	// events (API.md, Balances: entities carry description and populatedTags).
	var intelTags struct {
		Tags []any `json:"populatedTags"`
	}
	r.JSON(t, &intelTags)
	Eventually(t, 90*time.Second, func() error {
		br := p.Get(t, "/balances/entity/binance")
		var b struct {
			Entities map[string]struct {
				Tags []any `json:"populatedTags"`
			} `json:"entities"`
		}
		if br.Status != 200 {
			return fmt.Errorf("/balances/entity/binance: %d %s", br.Status, br.Body)
		}
		br.JSON(t, &b)
		if got := b.Entities["binance"].Tags; !reflect.DeepEqual(got, intelTags.Tags) {
			return fmt.Errorf("/balances/entity/binance populatedTags %v, want intelligence's %v", got, intelTags.Tags)
		}
		return nil
	})
	body := map[string]any{"addresses": []string{"0x28c6c06298d514db089934071355e5743bf21d60", "34xp4vRoCGJym3xR7yCVPFHoCNxv4Twseo", "0x" + randHex(20)}}
	r = p.Do(t, http.MethodPost, "/intelligence/address/batch", key, body)
	var batch struct {
		Addresses map[string]addressInfo `json:"addresses"`
	}
	if r.JSON(t, &batch); r.Status != 200 || len(batch.Addresses) != 3 || batch.Addresses["34xp4vRoCGJym3xR7yCVPFHoCNxv4Twseo"].Chain != "bitcoin" {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	if c := r.Header.Get("X-Credits-Used"); c != "" && c != "3" {
		t.Errorf("batch of 3: X-Credits-Used %q, want 3", c)
	}
	if r := get("/intelligence/address/not-an-address"); r.Status != 404 || r.Error() == "" {
		t.Fatalf("bad address: %d %s", r.Status, r.Body)
	}
}

// The simulator's exchanges deposit and sweep; the heuristics find deposit addresses from the
// transfers that flowed through Kafka, and the enriched endpoint shows them.
func TestIntelligenceDepositDetectionOnSimulatedWorld(t *testing.T) {
	p := Get(t)
	if p.Stack == nil {
		t.Skip("needs the local stack's simulator")
	}
	var preds []struct {
		Address  string `json:"address"`
		EntityID string `json:"entityID"`
	}
	_, get := intelKey(t, p)
	var exchange string
	attempt := 0
	exchanges := []string{"binance-sim", "coinbase-sim", "kraken-sim", "okx-sim"}
	Eventually(t, 90*time.Second, func() error {
		ex := exchanges[attempt%len(exchanges)]
		attempt++
		time.Sleep(150 * time.Millisecond)
		r := get("/intelligence/entity_predictions/" + ex)
		if r.Status != 200 {
			return fmt.Errorf("%s predictions: %d %s", ex, r.Status, r.Body)
		}
		r.JSON(t, &preds)
		if len(preds) == 0 {
			return fmt.Errorf("no deposit address detected yet")
		}
		exchange = ex
		return nil
	})
	// The API's cache follows the store within its refresh interval.
	Eventually(t, 60*time.Second, func() error {
		r := get("/intelligence/address_enriched/" + preds[0].Address + "?includeTags=false")
		var info struct {
			addressInfo
			ClusterIDs *[]string `json:"clusterIds"`
		}
		// A deposit address is in a cluster with its customer's wallet unless only attributed
		// addresses (a fund, another exchange) paid into it.
		if r.JSON(t, &info); r.Status != 200 || info.DepositServiceID != exchange || info.PredictedEntity == nil || info.PredictedEntity.ID != exchange ||
			info.ClusterIDs == nil || len(*info.ClusterIDs) > 1 {
			return fmt.Errorf("deposit address %s: %d %s", preds[0].Address, r.Status, r.Body)
		}
		return nil
	})
}

// A caller's own label shows on intelligence answers for that caller; a shareable user entity's
// summary is readable without a key.
func TestIntelligenceUserLabelsAndSharedSummary(t *testing.T) {
	p := Get(t)
	key, get := intelKey(t, p)
	addr := "0x" + randHex(20)
	r := p.Do(t, http.MethodPost, "/user/labels", key, []map[string]string{{"name": "my cold wallet", "note": "", "address": addr, "chainType": "evm"}})
	if r.Status != 200 && r.Status != 201 {
		t.Fatalf("create label: %d %s", r.Status, r.Body)
	}
	r = get("/intelligence/address/" + addr)
	var info addressInfo
	if r.JSON(t, &info); r.Status != 200 || info.UserLabel == nil || info.UserLabel.Name != "my cold wallet" {
		t.Fatalf("own label: %d %s", r.Status, r.Body)
	}

	r = p.Do(t, http.MethodPost, "/user/entities", key, map[string]any{"name": "shared desk", "shareable": true,
		"addresses": map[string][]string{"evm": {addr}}})
	var created []struct {
		ID string `json:"id"`
	}
	if r.JSON(t, &created); (r.Status != 200 && r.Status != 201) || len(created) != 1 {
		t.Fatalf("create entity: %d %s", r.Status, r.Body)
	}
	r = p.Do(t, http.MethodGet, "/intelligence/entity/"+created[0].ID+"/summary", "", nil)
	var sum struct {
		EntityID     string  `json:"entityId"`
		NumAddresses int     `json:"numAddresses"`
		BalanceUSD   float64 `json:"balanceUsd"`
	}
	if r.JSON(t, &sum); r.Status != 200 || sum.EntityID != created[0].ID || sum.NumAddresses != 1 {
		t.Fatalf("shared summary without key: %d %s", r.Status, r.Body)
	}
	// With the owner's key the entity also answers /intelligence/entity, and the address shows
	// its user entity.
	r = get("/intelligence/address/" + addr)
	var withEntity struct {
		UserEntity *struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"userEntity"`
		IsUserAddress bool `json:"isUserAddress"`
	}
	if r.JSON(t, &withEntity); r.Status != 200 || withEntity.UserEntity == nil || withEntity.UserEntity.ID != created[0].ID || !withEntity.IsUserAddress {
		t.Fatalf("user entity on address: %d %s", r.Status, r.Body)
	}
}
