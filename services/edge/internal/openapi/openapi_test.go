package openapi_test

import (
	"encoding/json"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/libs/sharedtest"
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

type parameter struct {
	Name   string `json:"name"`
	Schema struct {
		Enum []any `json:"enum"`
	} `json:"schema"`
}

// A boolean query parameter (params.Bool reads it case-insensitively) is not documented with an
// enum of its lower-case spellings, which would tell clients that TRUE or False are refused.
func TestBooleanParametersAreNotNarrowerEnums(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]parameter `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	check := func(where string, p parameter) {
		in := map[string]bool{}
		for _, v := range p.Schema.Enum {
			if s, ok := v.(string); ok {
				in[s] = true
			}
		}
		if !in["true"] && !in["false"] {
			return
		}
		for _, v := range []string{"TRUE", "True", "FALSE", "False"} {
			if _, err := params.Bool(url.Values{"b": {v}}, "b", false); err == nil && !in[v] {
				t.Errorf("%s: %s's enum %v leaves out %q, which params.Bool accepts", where, p.Name, p.Schema.Enum, v)
			}
		}
	}
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				Parameters []parameter `json:"parameters"`
			}
			if json.Unmarshal(raw, &op) != nil {
				continue
			}
			for _, p := range op.Parameters {
				check(method+" "+path, p)
			}
		}
	}
	for name, p := range doc.Components.Parameters {
		check("components/parameters/"+name, p)
	}
}

// Every query parameter that ../shared/design/public-api-shapes.json (the mirrored API) lists for
// an operation the edge routes is documented on that operation, honoured or accepted and
// ignored (docs/contracts.md), and no operation lists a parameter twice. The second check reads
// only the document, so it runs before the shared file is looked for (and without it).
func TestDocumentListsPublicQueryParameters(t *testing.T) {
	query := documentedQueries(t)
	routed := map[string]bool{}
	for _, rt := range routes.Table {
		routed[openapi.OperationKey(rt.Method, rt.Pattern)] = true
	}
	checked := 0
	for _, op := range publicOperations(t) {
		key := openapi.OperationKey(op.Method, op.Path)
		documented, ok := query[key]
		if !routed[key] || !ok {
			continue // not routed, or undocumented: TestDocumentMatchesRouteTable reports that
		}
		checked++
		var missing []string
		for _, p := range op.Parameters {
			if p.In == "query" && !documented[p.Name] {
				missing = append(missing, p.Name)
			}
		}
		if len(missing) > 0 {
			t.Errorf("%s %s: query parameters of the public API not documented: %s", op.Method, op.Path, strings.Join(missing, ", "))
		}
	}
	if checked == 0 {
		t.Fatal("no routed operation found in public-api-shapes.json")
	}
}

// publicOperation is an operation of public-api-shapes.json, with the parameters it lists.
type publicOperation struct {
	Method     string              `json:"method"`
	Path       string              `json:"path"`
	Parameters []openapi.Parameter `json:"parameters"`
}

// publicOperations reads ../shared/design/public-api-shapes.json (CHAININTEL_SHARED overrides
// where ../shared is), skipping t when it is absent.
func publicOperations(t *testing.T) []publicOperation {
	t.Helper()
	raw, err := os.ReadFile(sharedtest.Path(t, "design/public-api-shapes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var shapes struct {
		Operations []publicOperation `json:"operations"`
	}
	if err := json.Unmarshal(raw, &shapes); err != nil {
		t.Fatal(err)
	}
	return shapes.Operations
}

// documentedQueries returns the names of every documented operation's query parameters (its
// path's and its own, references resolved), by "METHOD /path/{}", and reports a parameter that
// an operation lists twice.
func documentedQueries(t *testing.T) map[string]map[string]bool {
	t.Helper()
	ops, err := openapi.Operations()
	if err != nil {
		t.Fatal(err)
	}
	for k, ps := range ops {
		checkUnique(t, k, ps)
	}
	query, err := openapi.QueryParameters()
	if err != nil {
		t.Fatal(err)
	}
	return query
}

// checkUnique reports a parameter listed twice in one list: the same name in the same place (a
// path and a query parameter may share a name, as /token/balance/{chain}/{address}?address do;
// OpenAPI tells parameters apart by both).
func checkUnique(t *testing.T, where string, ps []openapi.Parameter) {
	t.Helper()
	seen := map[string]bool{}
	for _, p := range ps {
		k := p.In + " " + p.Name
		if seen[k] {
			t.Errorf("%s: %s parameter %q listed twice", where, p.In, p.Name)
		}
		seen[k] = true
	}
}
