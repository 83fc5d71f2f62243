package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// A caller creates a webhook method and an alert through the edge, reads it back, replaces and
// deletes it; another caller sees none of it (404, empty lists) and cannot use the method.
func TestAlertsThroughEdge(t *testing.T) {
	p := Get(t)
	alice := p.NewKey(t, "api", "org_admin")
	bob := p.NewKey(t, "api", "individual")

	r := p.Do(t, http.MethodPost, "/user/alert_methods", alice, map[string]any{"url": "https://hooks.example.com/e2e", "description": "e2e"})
	var m struct {
		ID        int64     `json:"id"`
		Secret    string    `json:"secret"`
		CreatedAt time.Time `json:"createdAt"`
	}
	if r.Status != 200 {
		t.Fatalf("POST /user/alert_methods: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &m)
	ulExpectJSON(t, "POST /user/alert_methods", r, 200, fmt.Sprintf(`{"id":%d,"kind":"webhook","url":"https://hooks.example.com/e2e",
		"description":"e2e","createdAt":%q,"secret":%q}`, m.ID, m.CreatedAt.Format(time.RFC3339Nano), m.Secret))
	ulExpectJSON(t, "GET /user/alert_methods", p.Do(t, http.MethodGet, "/user/alert_methods", alice, nil), 200, fmt.Sprintf(
		`[{"id":%d,"kind":"webhook","url":"https://hooks.example.com/e2e","description":"e2e","createdAt":%q}]`, m.ID, m.CreatedAt.Format(time.RFC3339Nano)))

	const wallet = "0x28c6c06298d514db089934071355e5743bf21d60"
	r = p.Do(t, http.MethodPost, "/user/alerts", alice, map[string]any{"name": "hot wallet", "enabled": true, "base": nil,
		"from": []string{wallet}, "tokens": []string{"ethereum"}, "chains": []string{"ethereum"}, "usdGte": 1000, "alertMethodId": m.ID})
	if r.Status != 200 {
		t.Fatalf("POST /user/alerts: %d %s", r.Status, r.Body)
	}
	var id int64
	r.JSON(t, &id)
	path := fmt.Sprintf("/user/alerts/%d", id)

	r = p.Do(t, http.MethodGet, path, alice, nil)
	var got struct {
		CreatedAt time.Time `json:"createdAt"`
		OwnerUID  string    `json:"ownerUID"`
	}
	r.JSON(t, &got)
	if got.OwnerUID == "" {
		t.Fatalf("no ownerUID: %s", r.Body)
	}
	alert := func(name string, enabled bool, usdGte string) string {
		return fmt.Sprintf(`{"id":%d,"name":%q,"enabled":%t,"base":null,"from":[%q],"to":[],"tokens":["ethereum"],"chains":["ethereum"],
			"usdGte":%s,"usdLte":null,"valueGte":null,"valueLte":null,"description":null,"alertMethodId":%d,"createdAt":%q,
			"shareable":false,"ownerUID":%q,"activelyFeatured":false}`, id, name, enabled, wallet, usdGte, m.ID, got.CreatedAt.Format(time.RFC3339Nano), got.OwnerUID)
	}
	ulExpectJSON(t, "GET "+path, r, 200, alert("hot wallet", true, "1000"))
	ulExpectJSON(t, "GET /user/alerts", p.Do(t, http.MethodGet, "/user/alerts", alice, nil), 200, "["+alert("hot wallet", true, "1000")+"]")

	r = p.Do(t, http.MethodPut, path, alice, map[string]any{"name": "paused", "enabled": false, "base": nil,
		"from": []string{wallet}, "tokens": []string{"ethereum"}, "chains": []string{"ethereum"}, "usdGte": 2500.5, "alertMethodId": m.ID})
	if r.Status != http.StatusNoContent || len(r.Body) != 0 {
		t.Fatalf("PUT %s: %d %s", path, r.Status, r.Body)
	}
	ulExpectJSON(t, "GET "+path+" after PUT", p.Do(t, http.MethodGet, path, alice, nil), 200, alert("paused", false, "2500.5"))

	// Another caller: nothing of alice's, through any route.
	notFound := fmt.Sprintf(`{"error":"no alert %d"}`, id)
	ulExpectJSON(t, "bob GET "+path, p.Do(t, http.MethodGet, path, bob, nil), 404, notFound)
	ulExpectJSON(t, "bob DELETE "+path, p.Do(t, http.MethodDelete, path, bob, nil), 404, notFound)
	ulExpectJSON(t, "bob GET /user/alerts", p.Do(t, http.MethodGet, "/user/alerts", bob, nil), 200, `[]`)
	ulExpectJSON(t, "bob GET /user/alert_methods", p.Do(t, http.MethodGet, "/user/alert_methods", bob, nil), 200, `[]`)
	ulExpectJSON(t, "bob POST /user/alerts", p.Do(t, http.MethodPost, "/user/alerts", bob, map[string]any{"name": "x", "enabled": true,
		"base": []string{"binance"}, "alertMethodId": m.ID}), 400,
		fmt.Sprintf(`{"error":"alertMethodId: %d is not one of your alert methods (GET /user/alert_methods lists them)"}`, m.ID))

	// The method is in use until the alert is gone.
	methodPath := fmt.Sprintf("/user/alert_methods/%d", m.ID)
	ulExpectJSON(t, "DELETE "+methodPath, p.Do(t, http.MethodDelete, methodPath, alice, nil), 409,
		fmt.Sprintf(`{"error":"alert method %d is used by alert %d; delete it or move it to another method first"}`, m.ID, id))
	if r := p.Do(t, http.MethodDelete, path, alice, nil); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE %s: %d %s", path, r.Status, r.Body)
	}
	ulExpectJSON(t, "GET "+path+" after DELETE", p.Do(t, http.MethodGet, path, alice, nil), 404, notFound)
	if r := p.Do(t, http.MethodDelete, methodPath, alice, nil); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE %s: %d %s", methodPath, r.Status, r.Body)
	}
	ulExpectJSON(t, "GET /user/alerts at the end", p.Do(t, http.MethodGet, "/user/alerts", alice, nil), 200, `[]`)
}
