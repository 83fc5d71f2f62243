package openapi_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/services/edge/internal/openapi"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
)

type operation struct {
	Credits    *float64 `json:"x-credits"`
	CreditUnit string   `json:"x-credit-unit"`
	RateClass  string   `json:"x-rate-class"`
	Security   *[]any   `json:"security"`
}

// Every route of the table is documented with the same method, credits, unit and rate class,
// and every documented operation is routed.
func TestDocumentMatchesRouteTable(t *testing.T) {
	var doc struct {
		OpenAPI string                          `json:"openapi"`
		Paths   map[string]map[string]operation `json:"paths"`
	}
	if err := json.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	routed := map[string]routes.Route{}
	for _, rt := range routes.Table {
		routed[strings.ToLower(rt.Method)+" "+rt.Pattern] = rt
	}
	documented := map[string]operation{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				documented[method+" "+path] = op
			}
		}
	}
	var missing, extra []string
	for k, rt := range routed {
		op, ok := documented[k]
		if !ok {
			missing = append(missing, k)
			continue
		}
		if op.Credits == nil || *op.Credits != float64(rt.Credits) {
			t.Errorf("%s: x-credits %v, table %d", k, op.Credits, rt.Credits)
		}
		if op.CreditUnit != string(rt.Unit) {
			t.Errorf("%s: x-credit-unit %q, table %q", k, op.CreditUnit, rt.Unit)
		}
		if op.RateClass != string(rt.Class) {
			t.Errorf("%s: x-rate-class %q, table %q", k, op.RateClass, rt.Class)
		}
		public := rt.Class == routes.Public
		if documentedPublic := op.Security != nil && len(*op.Security) == 0; documentedPublic != public && !rt.KeyOptional {
			t.Errorf("%s: documented as public=%v, table public=%v", k, documentedPublic, public)
		}
	}
	for k := range documented {
		if _, ok := routed[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routed but not documented: %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("documented but not routed: %v", extra)
	}
}
