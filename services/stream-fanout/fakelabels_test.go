package streamfanout_test

import (
	"encoding/json"
	"net/http"
	"strings"
)

// writeEntities answers a fake user-labels' POST /internal/entities: those of the ids asked
// for that ents holds (by lower-case id), as {"entities": [...]}.
func writeEntities(rw http.ResponseWriter, r *http.Request, ents map[string]any) {
	var req struct {
		IDs []string `json:"ids"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	out := []any{}
	for _, id := range req.IDs {
		if e, ok := ents[strings.ToLower(id)]; ok {
			out = append(out, e)
		}
	}
	b, _ := json.Marshal(map[string]any{"entities": out})
	rw.Header().Set("Content-Type", "application/json")
	_, _ = rw.Write(b)
}

// writeLookup answers a fake user-labels' POST /internal/lookup: no labels or memberships, and
// additions (by operator entity, then chain type) when asked for.
func writeLookup(rw http.ResponseWriter, r *http.Request, additions map[string]map[string][]string) {
	out := map[string]any{"labels": map[string]any{}, "entities": map[string]any{}}
	if r.URL.Query().Get("additions") == "true" && len(additions) > 0 {
		out["additions"] = additions
	}
	b, _ := json.Marshal(out)
	rw.Header().Set("Content-Type", "application/json")
	_, _ = rw.Write(b)
}
