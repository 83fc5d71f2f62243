package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

func TestIdentityRoundTripAndTamper(t *testing.T) {
	s := NewSigner("0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	id := Identity{KeyID: "k1", UserID: "u1", OrgID: "o1", Role: RoleOrgAdmin, Tier: "api"}
	h := http.Header{}
	s.Sign(h, id, now)
	got, err := s.Verify(h, now.Add(time.Minute))
	if err != nil || got != id {
		t.Fatalf("verify: %+v %v", got, err)
	}

	tampered := h.Clone()
	tampered.Set(HeaderCaller, withField(h.Get(HeaderCaller), 2, "u2"))
	if _, err := s.Verify(tampered, now); !errors.Is(err, ErrBadIdentity) {
		t.Fatalf("tampered identity accepted: %v", err)
	}
	for _, bad := range []string{"v1", "v2 k1 u1 o1 org_admin api 1800000000 sig", withField(h.Get(HeaderCaller), 3, "%zz"),
		h.Get(HeaderCaller) + " extra", strings.Replace(h.Get(HeaderCaller), " ", "  ", 1)} {
		if _, err := s.Verify(http.Header{HeaderCaller: {bad}}, now); !errors.Is(err, ErrBadIdentity) {
			t.Fatalf("malformed identity %q: %v", bad, err)
		}
	}
	// Fields are escaped: an id with a space or a percent sign round-trips.
	odd := Identity{KeyID: "k 1", UserID: "u%2", Role: RoleIndividual, Tier: "api"}
	oh := http.Header{}
	s.Sign(oh, odd, now)
	if got, err := s.Verify(oh, now); err != nil || got != odd {
		t.Fatalf("escaped identity: %+v %v", got, err)
	}
	if _, err := NewSigner("another-secret-value").Verify(h, now); !errors.Is(err, ErrBadIdentity) {
		t.Fatalf("wrong secret accepted: %v", err)
	}
	if _, err := s.Verify(h, now.Add(MaxIdentitySkew+time.Second)); !errors.Is(err, ErrExpiredIdentity) {
		t.Fatalf("stale identity accepted: %v", err)
	}
	if _, err := s.Verify(http.Header{}, now); !errors.Is(err, ErrNoIdentity) {
		t.Fatalf("empty: %v", err)
	}
	StripIdentity(h)
	h.Set("X-Caller-Whatever", "x")
	h["x-caller"] = []string{"not canonical"} // as a non-canonicalizing client might send it
	StripIdentity(h)
	if len(h) != 0 {
		t.Fatalf("headers left: %v", h)
	}

	// Signatures are reused within a second only for the very same identity, never across
	// identities or seconds.
	for i, c := range []struct {
		id  Identity
		now time.Time
	}{
		{id, now}, {id, now}, {Identity{KeyID: "k1", UserID: "u9", Role: RoleIndividual, Tier: "api"}, now},
		{id, now.Add(time.Second)}, {id, now.Add(2 * time.Second)},
	} {
		h := http.Header{}
		s.Sign(h, c.id, c.now)
		if got, err := s.Verify(h, c.now); err != nil || got != c.id {
			t.Fatalf("signature %d: %+v %v", i, got, err)
		}
		if f := strings.Split(h.Get(HeaderCaller), " "); f[6] != strconv.FormatInt(c.now.Unix(), 10) {
			t.Fatalf("signature %d: time %s", i, f[6])
		}
	}
}

func TestEngineErrorsAreJSON(t *testing.T) {
	s := NewSigner("0123456789abcdef")
	e := NewEngine(EngineOptions{Service: "t"})
	e.Use(IdentityMiddleware(s))
	e.POST("/echo", func(c *gin.Context) {
		var v map[string]any
		if !BindJSON(c, &v) {
			return
		}
		c.JSON(200, v)
	})
	e.GET("/me", RequireIdentity(), func(c *gin.Context) {
		id, _ := IdentityFrom(c.Request.Context())
		c.JSON(200, gin.H{"user": id.UserID})
	})
	e.GET("/boom", func(c *gin.Context) { panic("boom") })

	do := func(method, path, body string, hdr http.Header) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header[k] = v
		}
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		return w.Code, strings.TrimSpace(w.Body.String())
	}
	signed := http.Header{}
	s.Sign(signed, Identity{KeyID: "k", UserID: "u9"}, time.Now())
	forged := signed.Clone()
	forged.Set(HeaderCaller, withField(signed.Get(HeaderCaller), 2, "someone-else"))
	older := signed.Clone() // an older edge's: the key hash beside a keyless signature
	older.Set(HeaderCallerKey, strings.Repeat("ab", 32))

	big := `{"a":"` + strings.Repeat("x", MaxBodyBytes) + `"}`
	tests := []struct {
		method, path, body string
		hdr                http.Header
		code               int
		want               string
	}{
		{"GET", "/nope", "", nil, 404, `{"error":"no route for /nope"}`},
		{"DELETE", "/echo", "", nil, 405, `{"error":"method DELETE not allowed on /echo"}`},
		{"POST", "/echo", `{"a":1}`, nil, 200, `{"a":1}`},
		{"POST", "/echo", `{"a":1} {"b":2}`, nil, 400, `{"error":"request body has data after the JSON value"}`},
		{"POST", "/echo", `{"a":`, nil, 400, `{"error":"request body is truncated JSON"}`},
		{"POST", "/echo", ``, nil, 400, `{"error":"request body is empty; want JSON"}`},
		{"POST", "/echo", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), nil, 400, `{"error":"request body nests deeper than 10000 levels"}`},
		{"POST", "/echo", `{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, nil, 400, `{"error":"request body nests deeper than 10000 levels"}`},
		{"POST", "/echo", `{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`, nil, 200, `{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`},
		{"POST", "/echo", `{"a":[}`, nil, 400, `{"error":"request body is not valid JSON (at byte 7)"}`},
		{"POST", "/echo", big, nil, 413, `{"error":"request body over 1048576 bytes"}`},
		{"GET", "/me", "", nil, 401, `{"error":"error validating API key"}`},
		{"GET", "/me", "", signed, 200, `{"user":"u9"}`},
		{"GET", "/me", "", forged, 401, `{"error":"invalid caller identity"}`},
		{"GET", "/me", "", older, 401, `{"error":"invalid caller identity: a v1 signature with an unsigned X-Caller-Key header (an edge older than the service; roll both to the same version)"}`},
		{"GET", "/boom", "", nil, 500, `{"error":"internal error"}`},
		// A pair url.Values would drop (and so answer a wider question) is refused, named.
		{"GET", "/me?timeLast=1h%", "", signed, 400, `{"error":"timeLast: holds an invalid percent-escape (a literal % is written %25)"}`},
		{"GET", "/me?chains=base;x", "", signed, 400, `{"error":"chains: holds a semicolon: query parameters are separated by ampersands only, and a semicolon in a value is written %3B"}`},
		{"GET", "/me?chains=base%3Bx", "", signed, 200, `{"user":"u9"}`},
	}
	for _, tc := range tests {
		code, body := do(tc.method, tc.path, tc.body, tc.hdr)
		if code != tc.code || body != tc.want {
			t.Errorf("%s %s: %d %s, want %d %s", tc.method, tc.path, code, body, tc.code, tc.want)
		}
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2]`, `{"a":1} x`, `"`, `{"a":{"b":[1,{"c":null}]}}`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var v any
		err := DecodeJSON(bytes.NewReader([]byte(in)), &v)
		if err == nil {
			// Whatever was accepted must be exactly one valid JSON value.
			if !json.Valid(bytes.TrimSpace([]byte(in))) {
				t.Fatalf("accepted invalid JSON %q", in)
			}
		}
	})
}

// withField returns the X-Caller value v with field i replaced.
func withField(v string, i int, to string) string {
	f := strings.Split(v, " ")
	f[i] = to
	return strings.Join(f, " ")
}

// Verify reads a header any in-cluster caller can send: it never panics and accepts nothing
// that Sign did not make.
func FuzzVerify(f *testing.F) {
	s := NewSigner("0123456789abcdef")
	now := time.Unix(1_800_000_000, 0)
	h := http.Header{}
	s.Sign(h, Identity{KeyID: "k1", UserID: "u1", OrgID: "o1", Role: RoleOrgAdmin, Tier: "api"}, now)
	f.Add(h.Get(HeaderCaller))
	f.Add("v1 a b  d e 1800000000 x")
	f.Add("")
	f.Fuzz(func(t *testing.T, v string) {
		id, err := s.Verify(http.Header{HeaderCaller: {v}}, now)
		if err != nil {
			return
		}
		again := http.Header{}
		s.Sign(again, id, now)
		if got, err := s.Verify(again, now); err != nil || got != id {
			t.Fatalf("accepted %q as %+v, which does not round-trip: %+v %v", v, id, got, err)
		}
	})
}

// TestSignWithKey: the caller's key hash travels under the identity's signature, so a header
// added to a keyless signature, altered, repeated or removed is refused, and Sign drops a
// stale one.
func TestSignWithKey(t *testing.T) {
	s := NewSigner("0123456789abcdef0123456789abcdef")
	now := time.Unix(1_700_000_000, 0)
	id := Identity{KeyID: "k1", UserID: "u1", Role: RoleIndividual, Tier: "free"}
	key, other := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	h := http.Header{}
	s.SignWithKey(h, id, key, now)
	if got, k, err := s.VerifyWithKey(h, now); err != nil || got != id || k != key {
		t.Fatalf("VerifyWithKey = %+v %q %v", got, k, err)
	}
	keyless := http.Header{}
	s.Sign(keyless, id, now)
	if _, k, err := s.VerifyWithKey(keyless, now); err != nil || k != "" {
		t.Fatalf("keyless: %q %v", k, err)
	}
	for name, tamper := range map[string]func(http.Header){
		"added":    func(x http.Header) { x.Set(HeaderCallerKey, other) },
		"altered":  func(x http.Header) { x.Set(HeaderCallerKey, other) },
		"repeated": func(x http.Header) { x.Add(HeaderCallerKey, key) },
		"removed":  func(x http.Header) { x.Del(HeaderCallerKey) },
	} {
		x := h.Clone()
		if name == "added" {
			x = keyless.Clone()
		}
		tamper(x)
		if _, _, err := s.VerifyWithKey(x, now); !errors.Is(err, ErrBadIdentity) {
			t.Errorf("key header %s: %v, want ErrBadIdentity", name, err)
		}
	}
	if v := h.Get(HeaderCaller); !strings.HasPrefix(v, "v2 ") || !strings.HasPrefix(keyless.Get(HeaderCaller), "v1 ") {
		t.Fatalf("version tags: keyed %q, keyless %q", v, keyless.Get(HeaderCaller))
	}
	// An older edge sent the key header beside a keyless v1 signature: refused, naming the
	// version mismatch; a forged v1 signature with a key header is plainly invalid.
	older := keyless.Clone()
	older.Set(HeaderCallerKey, key)
	if _, _, err := s.VerifyWithKey(older, now); !errors.Is(err, ErrIdentityVersion) {
		t.Fatalf("an older edge's keyed call: %v, want ErrIdentityVersion", err)
	}
	forged := older.Clone()
	forged.Set(HeaderCaller, withField(keyless.Get(HeaderCaller), 7, "AAAA"))
	if _, _, err := s.VerifyWithKey(forged, now); !errors.Is(err, ErrBadIdentity) || errors.Is(err, ErrIdentityVersion) {
		t.Fatalf("a forged v1 with a key: %v, want ErrBadIdentity only", err)
	}
	resigned := h.Clone()
	s.Sign(resigned, id, now)
	if _, k, err := s.VerifyWithKey(resigned, now); err != nil || k != "" || resigned.Get(HeaderCallerKey) != "" {
		t.Fatalf("Sign over a keyed header: %q %v %v", k, err, resigned)
	}
}
