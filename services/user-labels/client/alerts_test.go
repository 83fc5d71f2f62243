package client_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/chainintel/chainintel/services/user-labels/client"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
)

// The client reads every caller's alerts page by page, and one alert, with the service identity
// it signs itself (no caller in the context); a deleted alert is ErrNotFound.
func TestClientAlerts(t *testing.T) {
	c, svc := server(t)
	ctx := context.Background()
	url := "https://hooks.example.com/a"
	m, err := svc.CreateAlertMethod(ctx, "alice", app.AlertMethodBody{URL: &url})
	if err != nil {
		t.Fatal(err)
	}
	name, yes := "big", true
	usd := "25000.5"
	var ids []int64
	for range 3 {
		id, err := svc.CreateAlert(ctx, "alice", app.AlertBody{Name: &name, Enabled: &yes, Base: []string{"binance"}, USDGte: &usd, MethodID: &m.ID, OrgID: "acme", Tier: "pro"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	first, err := c.Alerts(ctx, ids[0]-1, 2)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := c.Alerts(ctx, first[len(first)-1].ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2 || len(rest) != 1 || first[0].ID != ids[0] || first[1].ID != ids[1] || rest[0].ID != ids[2] {
		t.Fatalf("pages %+v then %+v", first, rest)
	}
	want := client.Alert{ID: ids[2], Owner: "alice", Name: "big", Enabled: true, Base: []string{"binance"}, From: []string{}, To: []string{},
		Tokens: []string{}, Chains: []string{}, USDGte: "25000.5", Method: client.AlertMethod{ID: m.ID, Kind: "webhook", URL: url, Secret: m.Secret},
		OrgID: "acme", Tier: "pro", UpdatedAt: rest[0].UpdatedAt}
	if !reflect.DeepEqual(rest[0], want) || rest[0].UpdatedAt.IsZero() {
		t.Fatalf("alert %+v, want %+v", rest[0], want)
	}
	one, err := c.Alert(ctx, ids[2])
	if err != nil || !reflect.DeepEqual(one, want) {
		t.Fatalf("Alert: %+v %v", one, err)
	}
	if err := svc.DeleteAlert(ctx, "alice", ids[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Alert(ctx, ids[2]); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("deleted alert: %v", err)
	}
	if _, err := c.Alerts(ctx, 0, 0); err == nil {
		t.Fatal("limit 0 accepted")
	}
}
