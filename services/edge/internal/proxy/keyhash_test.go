package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
)

// TestKeyHashOnlyWhereAsked: a proxy with KeyHash sends the caller's key hash as the edge's
// invalidations name it, in place of any a client sent, under the identity's signature; others
// send none, and the key itself never leaves the edge.
func TestKeyHashOnlyWhereAsked(t *testing.T) {
	got := make(chan http.Header, 1)
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Clone() }))
	defer svc.Close()
	const raw = "ci_test-key"
	sum := sha256.Sum256([]byte(raw))
	want := hex.EncodeToString(sum[:])
	for _, hashed := range []bool{true, false} {
		signer := httpx.NewSigner("proxy-test-secret")
		p, err := New(Options{Service: "stream-fanout", Target: svc.URL, Signer: signer, KeyHash: hashed})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("GET", "/ws/v2/streams", nil)
		req.Header.Set("API-Key", raw)
		req.Header.Set(httpx.HeaderCallerKey, "forged")
		req = req.WithContext(httpx.WithIdentity(req.Context(), httpx.Identity{KeyID: "k", UserID: "u", Tier: "free"}))
		p.ServeHTTP(httptest.NewRecorder(), req)
		h := <-got
		if v := h.Values(httpx.HeaderCallerKey); hashed && (len(v) != 1 || v[0] != want) || !hashed && len(v) != 0 {
			t.Errorf("KeyHash %v: %s = %q, want %q", hashed, httpx.HeaderCallerKey, v, map[bool]string{true: want}[hashed])
		}
		if _, key, err := signer.VerifyWithKey(h, time.Now()); err != nil || key != map[bool]string{true: want}[hashed] {
			t.Errorf("KeyHash %v: the signature covers key %q (%v), want %q", hashed, key, err, map[bool]string{true: want}[hashed])
		}
		if h.Get("API-Key") != "" {
			t.Errorf("the key was forwarded")
		}
	}
}
