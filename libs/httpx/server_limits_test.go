package httpx_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
)

// An oversized request target or header block is refused in the API's JSON error shape by the
// server every service (and the edge) runs, not with net/http's plain-text 431.
func TestOversizedRequestsGetJSONErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpx.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	base := "http://" + ln.Addr().String()
	cases := []struct {
		name   string
		query  string
		header string
		status int
		body   string
	}{
		{"plain", "a=1", "", 200, "ok"},
		{"query of 100 KiB", strings.Repeat("a", 100<<10), "", 414, `{"error":"request target (path and query) over 65536 bytes"}` + "\n"},
		{"query of 900 KiB", strings.Repeat("a", 900<<10), "", 414, `{"error":"request target (path and query) over 65536 bytes"}` + "\n"},
		{"header of 100 KiB", "a=1", strings.Repeat("h", 100<<10), 431, `{"error":"request header fields over 65536 bytes"}` + "\n"},
	}
	for _, c := range cases {
		req, err := http.NewRequest(http.MethodGet, base+"/x?"+c.query, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.header != "" {
			req.Header.Set("X-Big", c.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != c.status || string(b) != c.body {
			t.Errorf("%s: %d %q, want %d %q", c.name, resp.StatusCode, b, c.status, c.body)
		}
		if c.status != 200 && resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", c.name, resp.Header.Get("Content-Type"))
		}
	}
}
