package edge_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/services/edge"
)

// With OPERATOR_NAME set to another word, the operator-named fields of upstream answers, the
// search toggles a client sends, the circulating path and the OpenAPI document all carry it.
func TestOperatorNameRenamesAttribution(t *testing.T) {
	var gotQuery, gotPath string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotQuery, gotPath = r.URL.RawQuery, r.URL.Path
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write([]byte(`{"address":"0xab","chain":"ethereum","serviceEntity":{"id":"binance","name":"Binance"},` +
			`"serviceLabel":{"name":"serviceLabel"},"userEntity":null,"serviceEntitiesOffset":0}`))
	}))
	t.Cleanup(up.Close)
	e := newEdge(t, edgeOpts{noConsume: true, tune: func(c *edge.Config) {
		c.OperatorName = "acme"
		c.UpstreamIntelligence, c.UpstreamTokenAnalytics = up.URL, up.URL
	}})
	k, _ := e.key(t, edge.KeySpec{Tier: "basic"})

	r := e.get("/intelligence/address/0xab?acmeEntities=false&chain=ethereum", k)
	want := `{"address":"0xab","chain":"ethereum","acmeEntity":{"id":"binance","name":"Binance"},` +
		`"acmeLabel":{"name":"serviceLabel"},"userEntity":null,"acmeEntitiesOffset":0}`
	if r.Status != 200 || r.Body != want {
		t.Fatalf("got %d %s\nwant 200 %s", r.Status, r.Body, want)
	}
	if gotQuery != "chain=ethereum&serviceEntities=false" {
		t.Errorf("upstream got query %q", gotQuery)
	}
	if r := e.get("/acme/circulating", k); r.Status != 200 || gotPath != "/native/circulating" {
		t.Errorf("/acme/circulating: %d, upstream path %q", r.Status, gotPath)
	}

	doc := e.get("/openapi.json", "")
	var d struct {
		Paths      map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(doc.Body), &d); err != nil || doc.Status != 200 {
		t.Fatalf("/openapi.json: %d %v", doc.Status, err)
	}
	if strings.Contains(doc.Body, `"serviceEntity"`) || strings.Contains(doc.Body, `"serviceLabel"`) {
		t.Error("the OpenAPI document still names serviceEntity/serviceLabel")
	}
	found := false
	for _, s := range d.Components.Schemas {
		_, a := s.Properties["acmeEntity"]
		_, b := s.Properties["acmeLabel"]
		found = found || (a && b)
	}
	if !found {
		t.Error("no schema of the OpenAPI document has acmeEntity and acmeLabel")
	}
	if _, ok := d.Paths["/acme/circulating"]; !ok {
		t.Error("the OpenAPI document lacks /acme/circulating")
	}
}
