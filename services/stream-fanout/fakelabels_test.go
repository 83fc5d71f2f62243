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

// writeAdditions answers a fake user-labels' POST /internal/additions: additions (by operator
// entity, then chain type) of the ids asked for.
func writeAdditions(rw http.ResponseWriter, r *http.Request, additions map[string]map[string][]string) {
	var req struct {
		IDs []string `json:"ids"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	out := map[string]any{}
	for _, id := range req.IDs {
		if m, ok := additions[id]; ok {
			out[id] = m
		}
	}
	b, _ := json.Marshal(map[string]any{"additions": out})
	rw.Header().Set("Content-Type", "application/json")
	_, _ = rw.Write(b)
}
