package streamfanout_test

import (
	"io"
	"net/http"
	"testing"
)

// TestHandshakeErrorsAreJSON: a request to a stream route that is not a WebSocket handshake is
// answered as every error of the API, {"error": ...}: 426 (with Upgrade: websocket) without the
// upgrade headers, 400 for a bad version.
func TestHandshakeErrorsAreJSON(t *testing.T) {
	w := newWorld(t)
	r := w.start(nil)
	for _, c := range []struct {
		name   string
		hdr    map[string]string
		status int
		body   string
	}{
		{"no upgrade", nil, http.StatusUpgradeRequired,
			`{"error":"WebSocket protocol violation: Connection header \"\" does not contain Upgrade"}`},
		{"bad version", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "8"}, http.StatusBadRequest,
			`{"error":"unsupported WebSocket protocol version (only 13 is supported): \"8\""}`},
	} {
		req, err := http.NewRequest(http.MethodGet, r.url+"/ws/transfers", nil)
		if err != nil {
			t.Fatal(err)
		}
		w.sign(req.Header, ident("kh"))
		for k, v := range c.hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != c.status || string(body) != c.body || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("%s: %d %v %s", c.name, resp.StatusCode, resp.Header, body)
		}
		if c.status == http.StatusUpgradeRequired && resp.Header.Get("Upgrade") != "websocket" {
			t.Errorf("%s: no Upgrade header: %v", c.name, resp.Header)
		}
	}
}
