package http

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// post answers a POST of body to path through the router.
func (e *env) post(path, body string) (int, string) {
	e.t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	e.h.ServeHTTP(w, r)
	b, _ := io.ReadAll(w.Body)
	return w.Code, string(b)
}

// POST /internal/tokens/known answers the subset of the ids the registry holds, sorted; bad
// bodies are a 400 naming the field. Whole bodies.
func TestKnownIDs(t *testing.T) {
	e := knownWorld(t)
	many := `{"ids":["a"` + strings.Repeat(`,"a"`, MaxKnownIDs) + `]}`
	cases := []struct {
		body   string
		status int
		want   string
	}{
		{`{"ids":["gamma","nope","alpha","alpha"]}`, 200, `{"known":["alpha","gamma"]}`},
		{`{"ids":["nope"]}`, 200, `{"known":[]}`},
		{`{"ids":[]}`, 200, `{"known":[]}`},
		{`{}`, 200, `{"known":[]}`},
		{`{"ids":["a b"]}`, 400, `{"error":"ids: \"a b\" must be a pricing id such as ethereum"}`},
		{`{"ids":[""]}`, 400, `{"error":"ids: \"\" must be a pricing id such as ethereum"}`},
		{many, 400, `{"error":"ids: more than 1000"}`},
	}
	for _, c := range cases {
		code, body := e.post("/internal/tokens/known", c.body)
		if code != c.status || body != c.want {
			t.Errorf("%.60s: got %d %s, want %d %s", c.body, code, body, c.status, c.want)
		}
	}
	// The GET route still takes "known" for a pricing id.
	if code, body := e.get("/internal/tokens/known"); code != 404 || errorOf(body) != "token known: not found" {
		t.Errorf("GET /internal/tokens/known: %d %s", code, body)
	}
	if code, _ := e.post("/internal/tokens/known", `{"ids":1}`); code != 400 {
		t.Errorf("ids not a list: %d", code)
	}
}
