package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/sharedtest"
)

// shapeOp is one operation of ../shared/design/public-api-shapes.json.
type shapeOp struct {
	Method     string `json:"method"`
	Path       string `json:"path"`
	Parameters []struct {
		Name     string         `json:"name"`
		In       string         `json:"in"`
		Required bool           `json:"required"`
		Schema   map[string]any `json:"schema"`
	} `json:"parameters"`
	Responses map[string]map[string]any `json:"responses"`
}

// knownShapeGaps are the differences from the public shapes this platform has today, listed so
// that they are seen: the walk fails on any gap not listed here. Each line is one gap as the
// walk reports it.
var knownShapeGaps = map[string]bool{
	// The public shapes list entityTopHolders as required (null without groupByEntity); API.md
	// marks it optional and omits absent optional fields, and API.md is the contract.
	"GET /token/holders/{id}: the answer lacks required field entityTopHolders":              true,
	"GET /token/holders/{chain}/{address}: the answer lacks required field entityTopHolders": true,
}

var templateParam = regexp.MustCompile(`\{[^}]*\}`)

// TestPublicShapes walks public-api-shapes.json: for every GET operation the edge routes (its
// OpenAPI document lists exactly the routed paths), every listed parameter and an unknown one
// are accepted (no 400 "unknown parameter"), and a live answer carries every required response
// field with its type.
func TestPublicShapes(t *testing.T) {
	p := Get(t)
	raw, err := os.ReadFile(sharedtest.Path(t, "design/public-api-shapes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var shapes struct {
		Operations []shapeOp `json:"operations"`
	}
	if err := json.Unmarshal(raw, &shapes); err != nil {
		t.Fatal(err)
	}
	routed := routedPaths(t, p)
	key := p.KeyFor(t)
	waitForMarket(t, p, key)
	samples := shapeSamples(t, p, key)
	var gaps []string
	walked := 0
	for _, op := range shapes.Operations {
		norm := op.Method + " " + templateParam.ReplaceAllString(op.Path, "{}")
		if !routed[norm] {
			continue
		}
		if strings.HasPrefix(op.Path, "/ws/") {
			continue // a WebSocket; e2e/edge_test.go and the stream tests call it
		}
		if op.Method != http.MethodGet {
			t.Logf("%s %s: routed; only GET operations are walked (the others change data)", op.Method, op.Path)
			continue
		}
		walked++
		gaps = append(gaps, walkOperation(t, p, key, op, samples)...)
	}
	if walked == 0 {
		t.Fatal("no routed GET operation found in public-api-shapes.json")
	}
	t.Logf("walked %d routed GET operations", walked)
	var fresh []string
	for _, g := range gaps {
		if !knownShapeGaps[g] {
			fresh = append(fresh, g)
		}
	}
	sort.Strings(fresh)
	if len(fresh) > 0 {
		t.Errorf("%d gaps from the public shapes not listed in knownShapeGaps:\n%s", len(fresh), strings.Join(fresh, "\n"))
	}
	seen := map[string]bool{}
	for _, g := range gaps {
		seen[g] = true
	}
	for g := range knownShapeGaps {
		if !seen[g] {
			t.Logf("listed gap no longer seen (remove it from knownShapeGaps): %s", g)
		}
	}
}

// routedPaths reads the edge's OpenAPI document: "METHOD /path/{}" of every routed operation.
func routedPaths(t *testing.T, p *Platform) map[string]bool {
	r := p.Do(t, http.MethodGet, "/openapi.json", "", nil)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	r.JSON(t, &doc)
	out := map[string]bool{}
	for path, ops := range doc.Paths {
		for m := range ops {
			out[strings.ToUpper(m)+" "+templateParam.ReplaceAllString(path, "{}")] = true
		}
	}
	return out
}

// waitForMarket waits (up to a minute) until every chain /networks/status lists has its native
// coin's quote: a stack just started has blocks before the market's first prices, and a walk
// run then (alone, or first in the suite) would check shapes of answers still warming up.
func waitForMarket(t *testing.T, p *Platform, key string) {
	deadline := time.Now().Add(time.Minute)
	for {
		var st map[string]struct {
			AsOf struct {
				Price *string `json:"price"`
			} `json:"asOf"`
		}
		r := p.Do(t, http.MethodGet, "/networks/status", key, nil)
		priced := r.Status == http.StatusOK
		if priced {
			r.JSON(t, &st)
			for _, c := range st {
				priced = priced && c.AsOf.Price != nil
			}
		}
		if priced && len(st) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Logf("market data still warming up after a minute (/networks/status: %d %s): walking anyway", r.Status, r.Body)
			return
		}
		time.Sleep(time.Second)
	}
}

// shapeSamples are values for path and query parameters that name things the local stack
// holds: the entity of Binance's hot wallet, one of its transfers' transaction and token.
func shapeSamples(t *testing.T, p *Platform, key string) map[string]string {
	const wallet = "0x28c6c06298d514db089934071355e5743bf21d60"
	s := map[string]string{
		"address": wallet, "addr": wallet, "addresses": wallet, "chain": "ethereum", "chains": "ethereum",
		"pricingId": "ethereum", "pricingID": "ethereum", "id": "ethereum", "tokens": "ethereum", "query": "binance",
		"timeLast": "30d", "granularity": "1d", "time": strconv.FormatInt(time.Now().UnixMilli(), 10),
	}
	// /token/price_change's pastTime: an hour ago, which the simulated market's history holds.
	s["pastTime"] = strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10)
	var info struct {
		ServiceEntity *struct {
			ID string `json:"id"`
		} `json:"serviceEntity"`
	}
	if r := p.Do(t, http.MethodGet, "/intelligence/address/"+wallet+"?chain=ethereum", key, nil); r.Status == 200 {
		r.JSON(t, &info)
	}
	if info.ServiceEntity == nil {
		t.Logf("no entity for %s: entity routes get a made-up id", wallet)
		info.ServiceEntity = &struct {
			ID string `json:"id"`
		}{ID: "binance"}
	}
	for _, k := range []string{"entity", "entities", "entity_id", "base"} {
		s[k] = info.ServiceEntity.ID
	}
	r := p.Do(t, http.MethodGet, "/transfers?chains=ethereum&limit=50", key, nil)
	var tr struct {
		Transfers []struct {
			TransactionHash string `json:"transactionHash"`
			TokenAddress    string `json:"tokenAddress"`
		} `json:"transfers"`
	}
	if r.Status != 200 {
		t.Logf("no sample transaction: /transfers answers %d %s", r.Status, r.Body)
	} else {
		r.JSON(t, &tr)
	}
	for _, x := range tr.Transfers {
		s["hash"] = strings.SplitN(x.TransactionHash, "_", 2)[0]
		if x.TokenAddress != "" {
			s["tokenAddress"] = x.TokenAddress
			break
		}
	}
	return s
}

func sampleValue(name string, schema map[string]any, samples map[string]string) (string, bool) {
	// A sample named like the parameter serves only when it has the parameter's type: search's
	// `tokens` is a result count, not the token list other routes' `tokens` is.
	if v, ok := samples[name]; ok && fitsType(v, schema) {
		return v, true
	}
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return fmt.Sprint(e[0]), true
	}
	switch schema["type"] {
	case "boolean":
		return "false", true
	case "integer", "number":
		if m, ok := schema["minimum"].(float64); ok && m > 1 {
			return strconv.Itoa(int(m)), true
		}
		return "1", true
	case "array":
		if items, ok := schema["items"].(map[string]any); ok {
			return sampleValue(name, items, samples)
		}
	}
	if strings.HasSuffix(name, "Gte") || strings.HasSuffix(name, "Lte") {
		return "1", true
	}
	return "", false
}

// fitsType reports whether a sample value can stand for a parameter of schema's type.
func fitsType(v string, schema map[string]any) bool {
	switch schema["type"] {
	case "integer":
		_, err := strconv.ParseInt(v, 10, 64)
		return err == nil
	case "number":
		_, err := strconv.ParseFloat(v, 64)
		return err == nil
	}
	return true
}

// walkOperation calls op twice and returns its gaps: with every listed query parameter and an
// unknown one (none may be refused as unknown, the unknown one named ignored by the edge), and with the required ones and those naming
// things the stack holds (the answer must be a 200 carrying the required fields with their
// types).
func walkOperation(t *testing.T, p *Platform, key string, op shapeOp, samples map[string]string) []string {
	where := op.Method + " " + op.Path
	path := op.Path
	all, required := url.Values{}, url.Values{}
	for _, prm := range op.Parameters {
		v, ok := sampleValue(prm.Name, prm.Schema, samples)
		switch {
		case prm.In == "path" && !ok:
			t.Logf("%s: not called, no sample value for path parameter %s in this stack", where, prm.Name)
			return nil
		case prm.In == "path" && prm.Name == "address" && samples["tokenAddress"] != "" &&
			(strings.HasPrefix(op.Path, "/token/") || strings.HasPrefix(op.Path, "/intelligence/token/") || strings.HasPrefix(op.Path, "/intelligence/contract/")):
			path = strings.ReplaceAll(path, "{address}", samples["tokenAddress"])
		case prm.In == "path":
			path = strings.ReplaceAll(path, "{"+prm.Name+"}", url.PathEscape(v))
		case prm.In != "query":
		case !ok:
			v = "x"
			fallthrough
		default:
			all.Set(prm.Name, v)
			if _, named := samples[prm.Name]; prm.Required || named {
				required.Set(prm.Name, v)
			}
		}
	}
	var gaps []string
	all.Set("notAPublicParameter", "1")
	r := doPatiently(t, p, key, path+"?"+all.Encode())
	if r.Status == http.StatusBadRequest && strings.Contains(r.Error(), "unknown parameter") {
		gaps = append(gaps, where+": refuses a parameter as unknown: "+r.Error())
	}
	// Every listed parameter is documented, so the edge names the unknown one alone as ignored.
	if got := r.Header.Get("X-Chainintel-Ignored-Parameters"); got != "notAPublicParameter" {
		gaps = append(gaps, fmt.Sprintf("%s: X-Chainintel-Ignored-Parameters %q, want notAPublicParameter", where, got))
	}
	target := path
	if len(required) > 0 {
		target += "?" + required.Encode()
	}
	r = doPatiently(t, p, key, target)
	switch {
	case r.Status == http.StatusInternalServerError:
		return append(gaps, fmt.Sprintf("%s: answers 500 %q", where, r.Error()))
	case r.Status != http.StatusOK:
		// The sample values name nothing this stack holds yet (or a dependency is warming up):
		// the answer's shape is not checked, and the run says so.
		t.Logf("%s: shape not checked, answers %d %q", where, r.Status, r.Error())
		return gaps
	}
	schema := op.Responses["200"]
	if schema == nil {
		return gaps
	}
	var body any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		return append(gaps, where+": 200 answer is not JSON")
	}
	return append(gaps, checkShape(where, "", body, schema)...)
}

// doPatiently sends GET target, waiting out 429s (heavy routes allow one call per second).
func doPatiently(t *testing.T, p *Platform, key, target string) Response {
	for i := 0; ; i++ {
		r := p.Do(t, http.MethodGet, target, key, nil)
		if r.Status != http.StatusTooManyRequests || i == 20 {
			return r
		}
		wait := time.Second
		if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err == nil && s > 0 {
			wait = time.Duration(s) * time.Second
		}
		time.Sleep(wait)
	}
}

// checkShape compares a decoded JSON value with a shapes schema: the type, the required fields
// of objects, and (recursively) the properties present, the first items of arrays and the first
// values of maps. Named references ($ref) are not followed, but one is no licence for null: null
// fits only a nullable schema or one that constrains nothing (API.md: absent optional fields
// are omitted, not null).
func checkShape(where, at string, v any, schema map[string]any) []string {
	if v == nil {
		if schema["nullable"] == true || unconstrained(schema) {
			return nil
		}
		want := schema["type"]
		if want == nil {
			want = schema["$ref"]
		}
		return []string{fmt.Sprintf("%s: %s is null, want %v", where, name(at), want)}
	}
	var gaps []string
	switch want := schema["type"]; want {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %s is %s, want object", where, name(at), jsonType(v))}
		}
		props, _ := schema["properties"].(map[string]any)
		req, _ := schema["required"].([]any)
		for _, f := range req {
			if _, ok := m[f.(string)]; !ok {
				gaps = append(gaps, fmt.Sprintf("%s: %s lacks required field %s", where, name(at), f))
			}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		extra, _ := schema["additionalProperties"].(map[string]any)
		for i, k := range keys {
			if ps, ok := props[k].(map[string]any); ok {
				gaps = append(gaps, checkShape(where, at+"."+k, m[k], ps)...)
			} else if extra != nil && props == nil && i < 2 {
				gaps = append(gaps, checkShape(where, at+".*", m[k], extra)...)
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %s is %s, want array", where, name(at), jsonType(v))}
		}
		if items, ok := schema["items"].(map[string]any); ok {
			for i := 0; i < len(a) && i < 3; i++ {
				gaps = append(gaps, checkShape(where, at+"[]", a[i], items)...)
			}
		}
	case "string", "boolean", "number", "integer":
		got := jsonType(v)
		if got == "integer" && want == "number" {
			got = "number"
		}
		if got != want {
			gaps = append(gaps, fmt.Sprintf("%s: %s is %s, want %s", where, name(at), got, want))
		}
	}
	return dedupe(gaps)
}

// unconstrained reports whether schema says nothing a value must be: no type, no reference, no
// properties (the shapes' "{}" and bare oneOf holders).
func unconstrained(schema map[string]any) bool {
	for _, k := range []string{"type", "$ref", "properties", "items", "enum"} {
		if _, ok := schema[k]; ok {
			return false
		}
	}
	return true
}

func name(at string) string {
	if at == "" {
		return "the answer"
	}
	return at[1:]
}

func jsonType(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	}
	return "null"
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// The walk's null rule: an Entity's required, nullable service may be null; a non-nullable
// field may not, nor may a reference to a named object ($ref), which the walk does not follow.
func TestCheckShapeNulls(t *testing.T) {
	entity := map[string]any{"type": "object", "required": []any{"id", "service"}, "properties": map[string]any{
		"id": map[string]any{"type": "string"}, "service": map[string]any{"type": "boolean", "nullable": true},
		"owner": map[string]any{"$ref": "Address"}, "extra": map[string]any{}}}
	for _, c := range []struct {
		body string
		gaps int
	}{
		{`{"id":"a","service":null}`, 0},
		{`{"id":"a","service":true,"extra":null}`, 0},
		{`{"id":"a"}`, 1},                             // service is required: null, not omitted
		{`{"id":"a","service":"a16z-crypto"}`, 1},     // a string where the shape has a boolean
		{`{"id":null,"service":null}`, 1},             // id is not nullable
		{`{"id":"a","service":null,"owner":null}`, 1}, // a $ref is no licence for null
	} {
		var v any
		if err := json.Unmarshal([]byte(c.body), &v); err != nil {
			t.Fatal(err)
		}
		if gaps := checkShape("test", "", v, entity); len(gaps) != c.gaps {
			t.Errorf("%s: gaps %q, want %d", c.body, gaps, c.gaps)
		}
	}
}
