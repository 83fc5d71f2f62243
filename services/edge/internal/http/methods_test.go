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

// TestEncodedSlashNamesNoFixedPath: a path whose slash is percent-encoded is one segment to the
// router, so the 405 check agrees with it: both methods get the same answer (a 405 of the mux
// naming what the path has, or a 404), never a 405 naming a method the router then refuses.
func TestEncodedSlashNamesNoFixedPath(t *testing.T) {
	h := pathTestEdge(t)
	for _, path := range []string{"/intelligence/address/batch%2Fall", "/intelligence%2Faddress%2Fbatch", "/token%2Ftrending"} {
		answers := map[string]string{}
		for _, m := range []string{"GET", "POST", "PUT"} {
			r := httptest.NewRequest(m, path, nil)
			r.Header.Set("API-Key", "good")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code == http.StatusMethodNotAllowed && slices.Contains(strings.Split(w.Header().Get("Allow"), ", "), m) {
				t.Errorf("%s %s: 405 with Allow %q naming the method itself", m, path, w.Header().Get("Allow"))
			}
			if w.Code == http.StatusMethodNotAllowed {
				for _, a := range strings.Split(w.Header().Get("Allow"), ", ") {
					answers[m] = a
				}
			}
		}
		for m, a := range answers {
			r := httptest.NewRequest(a, path, nil)
			r.Header.Set("API-Key", "good")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code == http.StatusMethodNotAllowed {
				t.Errorf("%s %s named %s in Allow, which is refused with 405 too (Allow %q)", m, path, a, w.Header().Get("Allow"))
			}
		}
	}
}

// An unreserved character percent-encoded is the same path: GET of "%62atch" is the batch path's
// 405, not an address lookup of "batch".
func TestEncodedLetterIsTheFixedPath(t *testing.T) {
	h := pathTestEdge(t)
	r := httptest.NewRequest("GET", "/intelligence/address/%62atch", nil)
	r.Header.Set("API-Key", "good")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "POST" {
		t.Errorf("GET /intelligence/address/%%62atch: %d, Allow %q, %s; want 405, Allow POST", w.Code, w.Header().Get("Allow"), w.Body)
	}
}

// TestMethodRefusalEchoesThePathAsReceived: a 405 names the path as the client sent it (still
// escaped), as a 404 does, never decoded: "..%2f" shown as "../" would read as if the edge had
// resolved the path to another route.
func TestMethodRefusalEchoesThePathAsReceived(t *testing.T) {
	h := pathTestEdge(t)
	for _, c := range []struct{ method, path, allow string }{
		{"DELETE", "/flow/address/..%2f..%2ftransfers%2fhistogram", "GET"},
		{"PUT", "/tx/0x%41b", "GET"},
	} {
		r := httptest.NewRequest(c.method, c.path+"?x=1", nil)
		r.Header.Set("API-Key", "good")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		want := `{"error":"method ` + c.method + ` not allowed on ` + c.path + ` (allowed: ` + c.allow + `)"}`
		if w.Code != http.StatusMethodNotAllowed || strings.TrimSpace(w.Body.String()) != want {
			t.Errorf("%s %s: %d %s; want 405 %s", c.method, c.path, w.Code, w.Body, want)
		}
	}
}
