package attribution

import (
	"encoding/json"
	"fmt"
	"regexp"
)

var serviceNamed = regexp.MustCompile(`\bservice([A-Z][A-Za-z0-9]*)`)

// Document returns the OpenAPI document as the operator's clients see it: every operator-named
// field and parameter (in properties, required lists, parameter names and descriptions) carries
// the operator's word, and the circulating supply and the exchange's tokens are listed at their
// operator paths too (/<word>/circulating, /token/<word>_exchange_tokens).
func (n Names) Document(doc []byte) ([]byte, error) {
	if n.Renamed() {
		doc = serviceNamed.ReplaceAll(doc, []byte(n.word+"$1"))
	}
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	paths, _ := d["paths"].(map[string]any)
	for public, route := range n.operatorPaths() {
		if native, ok := paths[route].(map[string]any); ok && public != route {
			paths[public] = aliasOf(native)
		}
	}
	return json.MarshalIndent(d, "", "  ")
}

// aliasOf is a copy of a path's operations under another path: operation ids are unique in a
// document, so each copy's id is suffixed ByOperatorPath.
func aliasOf(ops map[string]any) map[string]any {
	alias := map[string]any{}
	for method, op := range ops {
		opm, ok := op.(map[string]any)
		if !ok {
			continue
		}
		cp := make(map[string]any, len(opm))
		for k, v := range opm {
			cp[k] = v
		}
		if id, ok := cp["operationId"].(string); ok {
			cp["operationId"] = id + "ByOperatorPath"
		}
		alias[method] = cp
	}
	return alias
}
