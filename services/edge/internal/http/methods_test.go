package http_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/services/edge/internal/routes"
)

// TestEveryPathRefusesOtherMethods: every path of the route table, under each method it has no
// route for, is a 405 whose Allow header names the methods it has, before any service sees it,
// even where a wildcard route of that method would take the path ("GET
// /intelligence/address/batch" is no address lookup of "batch"). Whole bodies.
func TestEveryPathRefusesOtherMethods(t *testing.T) {
	h := pathTestEdge(t)
	methods := map[string][]string{}
	for _, rt := range routes.Table {
		methods[rt.Pattern] = append(methods[rt.Pattern], rt.Method)
	}
	refused := 0
	for pattern, have := range methods {
		var allowed []string
		for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
			if slices.Contains(have, m) {
				allowed = append(allowed, m)
			}
		}
		allow := strings.Join(allowed, ", ")
		path := concrete(pattern)
		for _, m := range []string{"GET", "HEAD", "POST", "PUT", "DELETE"} {
			if slices.Contains(have, m) || (m == "HEAD" && slices.Contains(have, "GET")) {
				continue
			}
			r := httptest.NewRequest(m, path, nil)
			r.Header.Set("API-Key", "good")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			want := `{"error":"method ` + m + ` not allowed on ` + path + ` (allowed: ` + allow + `)"}`
			if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != allow || strings.TrimSpace(w.Body.String()) != want {
				t.Errorf("%s %s: %d, Allow %q, %s; want 405, Allow %q, %s", m, path, w.Code, w.Header().Get("Allow"), w.Body, allow, want)
			}
			refused++
		}
	}
	t.Logf("%d wrong methods over %d paths refused", refused, len(methods))
}
