package store

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// An attribution stored before an entity's service became a boolean holds the service's id
// string in info; top_flow reads it (the entity a service's, the prediction of none) and
// answers the boolean, rather than failing until every attribution is consumed again.
func TestTopFlowsReadsAnEntityServiceStoredAsItsID(t *testing.T) {
	ctx := context.Background()
	pool, st, clockHour := closeWorld(t)
	if err := st.ApplyFlows(ctx, hourlyFlows("ethereum", clockHour.Add(-3*time.Hour), clockHour, 6)); err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyClasses(ctx, []app.ClassChange{{ChainType: "evm", Address: "0xhot", EntityType: "cex", SetsEntity: true, Version: 1}}); err != nil {
		t.Fatal(err)
	}
	old := `{"entity":{"id":"coinbase","name":"Coinbase","note":"","type":"cex","service":"coinbase-prime"},` +
		`"label":"Hot Wallet","predictedEntity":{"id":"x","name":"X","note":"","type":"fund","service":""}}`
	if _, err := pool.Exec(ctx, `UPDATE market.address_classes SET info = $1::jsonb WHERE address = '0xhot'`, old); err != nil {
		t.Fatal(err)
	}
	got, err := st.TopFlows(ctx, []app.Deployment{{Chain: "ethereum", Address: "0xt"}}, clockHour.Add(-24*time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		if f.Address != "0xhot" {
			continue
		}
		if f.Attribution == nil || f.Attribution.Entity == nil || f.Attribution.PredictedEntity == nil {
			t.Fatalf("0xhot read without its attribution: %+v", f.Attribution)
		}
		b, err := json.Marshal(f.Attribution)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); !strings.Contains(s, `"type":"cex","service":true`) || !strings.Contains(s, `"type":"fund","service":null`) {
			t.Errorf("0xhot's attribution answers %s, want the entity's service true and the prediction's null", s)
		}
		return
	}
	t.Fatalf("0xhot not among the top flows %+v", got)
}
