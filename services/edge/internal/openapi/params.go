package openapi

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// templateParam is a path template's parameter ("{address}"), replaced by "{}" in operation keys
// so the document's names and the route table's need not agree.
var templateParam = regexp.MustCompile(`\{[^}]*\}`)

// OperationKey is an operation's key in QueryParameters: "METHOD /path/{}/...".
func OperationKey(method, pathTemplate string) string {
	return strings.ToUpper(method) + " " + templateParam.ReplaceAllString(pathTemplate, "{}")
}

// Parameter is a documented parameter (references resolved).
type Parameter struct {
	Name string `json:"name"`
	In   string `json:"in"`
	Ref  string `json:"$ref"`
}

// Operations reads every documented operation's parameters (its path's and its own, references
// resolved), by OperationKey.
func Operations() (map[string][]Parameter, error) {
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]Parameter `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(Document, &doc); err != nil {
		return nil, err
	}
	list := func(where string, raw json.RawMessage) ([]Parameter, error) {
		var ps []Parameter
		if err := json.Unmarshal(raw, &ps); err != nil {
			return nil, fmt.Errorf("%s parameters: %w", where, err)
		}
		for i, p := range ps {
			if p.Ref == "" {
				continue
			}
			c, ok := doc.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
			if !ok {
				return nil, fmt.Errorf("%s: unresolved parameter %s", where, p.Ref)
			}
			ps[i] = c
		}
		return ps, nil
	}
	out := map[string][]Parameter{}
	for path, ops := range doc.Paths {
		var shared []Parameter
		if raw, ok := ops["parameters"]; ok {
			var err error
			if shared, err = list(path, raw); err != nil {
				return nil, err
			}
		}
		for method, raw := range ops {
			if method == "parameters" || strings.HasPrefix(method, "x-") {
				continue
			}
			var op struct {
				Parameters json.RawMessage `json:"parameters"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			ps := append([]Parameter(nil), shared...)
			if op.Parameters != nil {
				own, err := list(strings.ToUpper(method)+" "+path, op.Parameters)
				if err != nil {
					return nil, err
				}
				ps = append(ps, own...)
			}
			out[OperationKey(method, path)] = ps
		}
	}
	return out, nil
}

// QueryParameters is, by OperationKey, the names of each documented operation's query
// parameters.
func QueryParameters() (map[string]map[string]bool, error) {
	ops, err := Operations()
	if err != nil {
		return nil, err
	}
	out := make(map[string]map[string]bool, len(ops))
	for k, ps := range ops {
		names := map[string]bool{}
		for _, p := range ps {
			if p.In == "query" {
				names[p.Name] = true
			}
		}
		out[k] = names
	}
	return out, nil
}
