package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/intelligence"
)

// Search through the edge: an imported entity and its labelled address, and the caller's own
// label, are found by name, label prefix and address prefix; one credit per call.
func TestIntelligenceSearchThroughEdge(t *testing.T) {
	p := Get(t)
	cfg := intelConfig(t, p)
	key, get := intelKey(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	suffix := randHex(4)
	ent, wallet, mine := "e2e-search-"+suffix, "0x"+randHex(20), "0x"+randHex(20)
	doc := fmt.Sprintf(`{"entities":[{"id":%q,"name":"Searchable Desk %s","type":"fund"}],
		"addresses":[{"chainType":"evm","address":%q,"entity":%q,"label":"Zq%s treasury"}]}`, ent, suffix, wallet, ent, suffix)
	if _, err := intelligence.ImportCurated(ctx, cfg, strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	if r := p.Do(t, http.MethodPost, "/user/labels", key, []map[string]string{{"name": "my zq" + suffix + " wallet", "note": "", "address": mine, "chainType": "evm"}}); r.Status != 200 {
		t.Fatalf("POST /user/labels: %d %s", r.Status, r.Body)
	}

	type entity struct {
		ID string `json:"id"`
	}
	var res struct {
		ServiceEntities  []entity      `json:"serviceEntities"`
		ServiceAddresses []addressInfo `json:"serviceAddresses"`
		UserAddresses    []addressInfo `json:"userAddresses"`
	}
	Eventually(t, 10*time.Second, func() error {
		r := get("/intelligence/search?query=zq" + suffix)
		if r.Status != 200 {
			return fmt.Errorf("search: %d %s", r.Status, r.Body)
		}
		if c := r.Header.Get("X-Credits-Used"); c != "1" {
			return fmt.Errorf("X-Credits-Used %q, want 1", c)
		}
		r.JSON(t, &res)
		if len(res.ServiceAddresses) != 1 || res.ServiceAddresses[0].Address != wallet || res.ServiceAddresses[0].ServiceEntity == nil ||
			res.ServiceAddresses[0].ServiceEntity.ID != ent {
			return fmt.Errorf("serviceAddresses by label prefix: %s", r.Body)
		}
		if len(res.UserAddresses) != 1 || res.UserAddresses[0].Address != mine || res.UserAddresses[0].UserLabel == nil {
			return fmt.Errorf("userAddresses: %s", r.Body)
		}
		return nil
	})
	r := get("/intelligence/search?query=searchable%20desk%20" + suffix + "&serviceAddresses=0")
	r.JSON(t, &res)
	if r.Status != 200 || len(res.ServiceEntities) != 1 || res.ServiceEntities[0].ID != ent || len(res.ServiceAddresses) != 0 {
		t.Fatalf("entity by name: %d %s", r.Status, r.Body)
	}
	r = get("/intelligence/search?query=" + wallet[:30])
	r.JSON(t, &res)
	if r.Status != 200 || len(res.ServiceAddresses) != 1 || res.ServiceAddresses[0].Address != wallet {
		t.Fatalf("address prefix: %d %s", r.Status, r.Body)
	}
	if r := get("/intelligence/search?query=a&tokens=500"); r.Status != 400 || r.Error() != "tokens: must be between 0 and 100, got 500" {
		t.Fatalf("bad toggle: %d %s", r.Status, r.Body)
	}
}

// The batch/all and enriched batch routes, entity types and a cluster summary through the edge,
// with their credits.
func TestIntelligenceBatchesThroughEdge(t *testing.T) {
	p := Get(t)
	cfg := intelConfig(t, p)
	key, get := intelKey(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	suffix := randHex(4)
	ent, wallet := "e2e-batch-"+suffix, "0x"+randHex(20)
	doc := fmt.Sprintf(`{"entities":[{"id":%q,"name":"Batch Desk","type":"e2e-type-%s"}],
		"addresses":[{"chainType":"evm","address":%q,"entity":%q,"label":"Batch wallet","tags":[{"id":"e2e-tag-%s","params":""}]}],
		"tags":[{"id":"e2e-tag-%s","label":"E2E tag","rank":5}]}`, ent, suffix, wallet, ent, suffix, suffix)
	if _, err := intelligence.ImportCurated(ctx, cfg, strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	r := get("/intelligence/entity_types")
	var types []string
	if r.JSON(t, &types); r.Status != 200 || !slices.Contains(types, "e2e-type-"+suffix) || r.Header.Get("X-Credits-Used") != "0" {
		t.Fatalf("entity_types: %d %s %v", r.Status, r.Body, r.Header)
	}
	Eventually(t, 10*time.Second, func() error {
		r := p.Do(t, http.MethodPost, "/intelligence/address/batch/all?chains=ethereum,base", key, map[string]any{"addresses": []string{wallet}})
		var out struct {
			Addresses map[string]map[string]addressInfo `json:"addresses"`
		}
		r.JSON(t, &out)
		m := out.Addresses[wallet]
		if r.Status != 200 || len(m) != 2 || m["base"].ServiceEntity == nil || m["base"].ServiceEntity.ID != ent {
			return fmt.Errorf("batch/all: %d %s", r.Status, r.Body)
		}
		if c := r.Header.Get("X-Credits-Used"); c != "2" {
			return fmt.Errorf("batch/all X-Credits-Used %q, want 2", c)
		}
		return nil
	})
	r = p.Do(t, http.MethodPost, "/intelligence/address_enriched/batch", key, map[string]any{"addresses": []string{wallet, wallet[:2] + strings.Repeat("0", 40)}})
	var enr struct {
		Addresses map[string]struct {
			PopulatedTags []struct {
				ID string `json:"id"`
			} `json:"populatedTags"`
		} `json:"addresses"`
	}
	if r.JSON(t, &enr); r.Status != 200 || len(enr.Addresses[wallet].PopulatedTags) != 1 || enr.Addresses[wallet].PopulatedTags[0].ID != "e2e-tag-"+suffix ||
		r.Header.Get("X-Credits-Used") != "4" {
		t.Fatalf("enriched batch: %d %s %v", r.Status, r.Body, r.Header)
	}
	r = p.Do(t, http.MethodPost, "/intelligence/address_enriched/batch/all?chains=ethereum", key, map[string]any{"addresses": []string{wallet}})
	if r.Status != 200 || r.Header.Get("X-Credits-Used") != "4" || !strings.Contains(string(r.Body), `"e2e-tag-`+suffix) {
		t.Fatalf("enriched batch/all: %d %s %v", r.Status, r.Body, r.Header)
	}
	// The plain batch takes chain and chains too: an unknown name is a 400 naming it (it read
	// neither, and answered 200), and chains bounds the chain an address is detected on.
	r = p.Do(t, http.MethodPost, "/intelligence/address/batch?chains=notachain", key, map[string]any{"addresses": []string{wallet}})
	if want := `{"error":"chains: unknown chain \"notachain\""}`; r.Status != 400 || strings.TrimSpace(string(r.Body)) != want {
		t.Fatalf("batch with an unknown chain: %d %s, want 400 %s", r.Status, r.Body, want)
	}
	r = p.Do(t, http.MethodPost, "/intelligence/address/batch?chains=base", key, map[string]any{"addresses": []string{wallet}})
	var one struct {
		Addresses map[string]addressInfo `json:"addresses"`
	}
	if r.JSON(t, &one); r.Status != 200 || one.Addresses[wallet].Chain != "base" {
		t.Fatalf("batch on base: %d %s", r.Status, r.Body)
	}
	if r := get("/cluster/cl-ffffffffffffffff/summary"); r.Status != 404 || r.Error() != `unknown cluster "cl-ffffffffffffffff"` {
		t.Fatalf("unknown cluster: %d %s", r.Status, r.Body)
	}
}

// An import shows in the change feeds through the edge.
func TestIntelligenceChangeFeedsThroughEdge(t *testing.T) {
	p := Get(t)
	cfg := intelConfig(t, p)
	_, get := intelKey(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	since := time.Now().Add(-time.Second).UnixMilli()
	suffix := randHex(4)
	ent, wallet := "e2e-feed-"+suffix, "0x"+randHex(20)
	doc := fmt.Sprintf(`{"entities":[{"id":%q,"name":"Feed Desk","type":"fund"}],
		"addresses":[{"chainType":"evm","address":%q,"entity":%q,"label":"Feed wallet"}]}`, ent, wallet, ent)
	if _, err := intelligence.ImportCurated(ctx, cfg, strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	var page struct {
		Items []struct {
			ID       string `json:"id"`
			Address  string `json:"address"`
			EntityID string `json:"entity_id"`
			Status   string `json:"status"`
		} `json:"items"`
		HasMore   bool   `json:"hasMore"`
		PageToken string `json:"pageToken"`
	}
	found := func(path string, match func(id, addr, entity, status string) bool) {
		t.Helper()
		token := ""
		for range 50 {
			r := get(path + "&limit=1000&pageToken=" + token)
			if r.Status != 200 || r.Header.Get("X-Credits-Used") != "1" {
				t.Fatalf("%s: %d %s", path, r.Status, r.Body)
			}
			page.HasMore, page.PageToken = false, ""
			r.JSON(t, &page)
			for _, it := range page.Items {
				if match(it.ID, it.Address, it.EntityID, it.Status) {
					return
				}
			}
			if !page.HasMore {
				break
			}
			token = page.PageToken
		}
		t.Fatalf("%s: the import's change is not in the feed", path)
	}
	found(fmt.Sprintf("/intelligence/entities/updates?since=%d", since), func(id, _, _, status string) bool { return id == ent && status == "new" })
	found(fmt.Sprintf("/intelligence/addresses/updates?since=%d", since), func(_, addr, entity, _ string) bool { return addr == wallet && entity == ent })
	// Filtered through the edge: only the import's entity and address, newest first.
	for _, path := range []string{
		fmt.Sprintf("/intelligence/entities/updates?entityId=%s&entityType=fund&orderBy=-diff_seq", ent),
		fmt.Sprintf("/intelligence/addresses/updates?chain=ethereum&address=%s&entityId=%s&label=FEED&service=true", "0x"+strings.ToUpper(wallet[2:]), ent),
	} {
		found(path, func(id, addr, entity, _ string) bool { return id == ent || addr == wallet })
		for _, it := range page.Items {
			if it.ID != ent && it.Address != wallet {
				t.Fatalf("%s: an item the filters exclude: %+v", path, it)
			}
		}
	}
	if r := get("/intelligence/tags/updates?status=gone"); r.Status != 400 {
		t.Fatalf("bad status: %d %s", r.Status, r.Body)
	}
}
