package store

import (
	"context"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/migrations"
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

// Migration 00016 rewrites a stored entity's service id string as the boolean (true for an id,
// null for an empty one) and leaves the other fields and rows of the new form alone.
func TestMigrationRewritesStoredEntityService(t *testing.T) {
	ctx := context.Background()
	pool, _, _ := closeWorld(t)
	raw, err := fs.ReadFile(migrations.FS, "00016_entity_service_bool.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, _, ok := strings.Cut(strings.SplitN(string(raw), "-- +goose Up", 2)[1], "-- +goose Down")
	if !ok {
		t.Fatal("00016 has no Down section")
	}
	rows := map[string]string{
		"0xold":  `{"entity": {"id": "cb", "type": "cex", "service": "cb-prime"}, "label": "Hot", "predictedEntity": {"id": "x", "service": ""}}`,
		"0xnew":  `{"entity": {"id": "cb", "type": "cex", "service": true}, "predictedEntity": {"id": "x", "service": null}}`,
		"0xnone": `{"label": "Pool"}`,
	}
	want := map[string]string{
		"0xold":  `{"label": "Hot", "entity": {"id": "cb", "type": "cex", "service": true}, "predictedEntity": {"id": "x", "service": null}}`,
		"0xnew":  `{"entity": {"id": "cb", "type": "cex", "service": true}, "predictedEntity": {"id": "x", "service": null}}`,
		"0xnone": `{"label": "Pool"}`,
	}
	if _, err := pool.Exec(ctx, `DELETE FROM market.address_classes WHERE address = ANY($1)`, []string{"0xold", "0xnew", "0xnone"}); err != nil {
		t.Fatal(err)
	}
	for a, info := range rows {
		if _, err := pool.Exec(ctx, `INSERT INTO market.address_classes (chain_type, address, entity_type, is_pool, version, info)
			VALUES ('evm', $1, 'cex', false, 1, $2::jsonb)`, a, info); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, up); err != nil {
		t.Fatal(err)
	}
	for a, w := range want {
		var same bool
		var got string
		if err := pool.QueryRow(ctx, `SELECT info = $2::jsonb, info::text FROM market.address_classes WHERE chain_type = 'evm' AND address = $1`, a, w).Scan(&same, &got); err != nil {
			t.Fatal(err)
		}
		if !same {
			t.Errorf("%s: info %s after 00016, want %s", a, got, w)
		}
	}
}
