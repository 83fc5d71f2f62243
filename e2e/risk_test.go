package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/intelligence"
)

// Risk scores through the edge: a mixer entity's address is a seed (mixer 100, a path of itself),
// the entity scores as its address, and credits are 1 a call, a batch 1 per distinct address or
// entity id; an unknown entity is a 404 costing nothing.
func TestRiskScoresThroughEdge(t *testing.T) {
	p := Get(t)
	cfg := intelConfig(t, p)
	key, get := intelKey(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ent, mixer, other := "e2e-mixer-"+randHex(4), "0x"+randHex(20), "0x"+randHex(20)
	doc := fmt.Sprintf(`{"entities":[{"id":%q,"name":"E2E Mixer","type":"mixer"}],
		"addresses":[{"chainType":"evm","address":%q,"entity":%q,"label":"pool"}]}`, ent, mixer, ent)
	if _, err := intelligence.ImportCurated(ctx, cfg, strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	credits := func(r Response, want string) {
		t.Helper()
		if got := r.Header.Get("X-Credits-Used"); got != want {
			t.Errorf("X-Credits-Used %q, want %s (%d %s)", got, want, r.Status, r.Body)
		}
	}
	var score struct {
		Address    string `json:"address"`
		IsSeed     bool   `json:"is_seed"`
		MixerScore *int   `json:"mixer_score"`
		RiskLevel  string `json:"risk_level"`
	}
	r := get("/risk/address/" + mixer)
	if r.JSON(t, &score); r.Status != 200 || !score.IsSeed || score.MixerScore == nil || *score.MixerScore != 100 || score.RiskLevel != "severe" {
		t.Fatalf("GET /risk/address: %d %s", r.Status, r.Body)
	}
	credits(r, "1")
	r = get("/risk/address/" + mixer + "/paths")
	if r.Status != 200 || !strings.Contains(string(r.Body), `"direction":"self"`) {
		t.Fatalf("paths: %d %s", r.Status, r.Body)
	}
	credits(r, "1")
	r = p.Do(t, http.MethodPost, "/risk/address/batch", key, map[string][]string{"addresses": {mixer, other, mixer}})
	var batch map[string]map[string]any
	if r.JSON(t, &batch); r.Status != 200 || len(batch) != 2 || batch[mixer]["is_seed"] != true || batch[other]["is_seed"] != false {
		t.Fatalf("address batch: %d %s", r.Status, r.Body)
	}
	credits(r, "2")
	var entity struct {
		EntityID           string  `json:"entity_id"`
		MaxScore           *int    `json:"max_score"`
		HighestRiskAddress *string `json:"highest_risk_address"`
		SeedAddresses      int     `json:"seed_addresses"`
	}
	r = get("/risk/entity/" + ent)
	if r.JSON(t, &entity); r.Status != 200 || entity.EntityID != ent || entity.MaxScore == nil || *entity.MaxScore != 100 ||
		entity.HighestRiskAddress == nil || *entity.HighestRiskAddress != mixer || entity.SeedAddresses != 1 {
		t.Fatalf("GET /risk/entity: %d %s", r.Status, r.Body)
	}
	credits(r, "1")
	r = p.Do(t, http.MethodPost, "/risk/entity/batch", key, map[string][]string{"entity_ids": {ent, ent}})
	if r.Status != 200 || !strings.Contains(string(r.Body), `"`+ent+`":{`) {
		t.Fatalf("entity batch: %d %s", r.Status, r.Body)
	}
	credits(r, "1")
	r = get("/risk/entity/e2e-nobody-" + randHex(4))
	if r.Status != 404 {
		t.Fatalf("unknown entity: %d %s", r.Status, r.Body)
	}
	credits(r, "0")
	r = get("/risk/address/not-an-address")
	if r.Status != 400 || r.Error() != `address: "not-an-address" is not a valid address on any configured chain` {
		t.Fatalf("bad address: %d %s", r.Status, r.Body)
	}
}
