package attribution

import (
	"encoding/json"
	"fmt"
	"regexp"
)

var serviceNamed = regexp.MustCompile(`\bservice([A-Z][A-Za-z0-9]*)`)

// Document returns the OpenAPI document as the operator's clients see it: every operator-named
// field and parameter (in properties, required lists, parameter names and descriptions) carries
// the operator's word, and the circulating supply is listed at /<word>/circulating.
func (n Names) Document(doc []byte) ([]byte, error) {
	if n.Renamed() {
		doc = serviceNamed.ReplaceAll(doc, []byte(n.word+"$1"))
	}
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	paths, _ := d["paths"].(map[string]any)
	if native, ok := paths[NativeCirculating].(map[string]any); ok {
		alias := map[string]any{}
		for method, op := range native {
			opm, ok := op.(map[string]any)
			if !ok {
				continue
			}
			cp := make(map[string]any, len(opm))
			for k, v := range opm {
				cp[k] = v
			}
			if id, ok := cp["operationId"].(string); ok {
				cp["operationId"] = id + "ByOperatorPath" // operation ids are unique in a document
			}
			alias[method] = cp
		}
		paths[n.CirculatingPath()] = alias
	}
	return json.MarshalIndent(d, "", "  ")
}
