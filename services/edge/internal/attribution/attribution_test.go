package attribution

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func names(t testing.TB, word string) Names {
	n, err := New(word)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

const upstream = `{"address":"0x1","serviceEntity":{"id":"binance","name":"serviceEntity \"q\" {","serviceLabel":null},` +
	`"services":[{"serviceLabel":{"name":"a,b:c"}}],"note":"serviceLabel","userEntity":null,"serviceEntitiesOffset":2,"x":[1,{"serviceX":"y"}]}`

const renamed = `{"address":"0x1","acmeEntity":{"id":"binance","name":"serviceEntity \"q\" {","acmeLabel":null},` +
	`"services":[{"acmeLabel":{"name":"a,b:c"}}],"note":"serviceLabel","userEntity":null,"acmeEntitiesOffset":2,"x":[1,{"acmeX":"y"}]}`

// Keys are renamed, values (even ones that read like a key) are not, at every split point.
func TestKeyRewriterEverySplit(t *testing.T) {
	n := names(t, "acme")
	for i := 0; i <= len(upstream); i++ {
		rw := NewKeyRewriter(n)
		got := string(rw.Rewrite([]byte(upstream[:i])))
		got += string(rw.Rewrite([]byte(upstream[i:]))) // after the first is copied: the buffer is reused
		if got != renamed {
			t.Fatalf("split at %d:\n got %s\nwant %s", i, got, renamed)
		}
	}
}

func TestNewRefusesBadWords(t *testing.T) {
	for _, w := range []string{"Acme", "ac-me", "1acme", "acme/x", strings.Repeat("a", 33)} {
		if _, err := New(w); err == nil {
			t.Errorf("%q accepted", w)
		}
	}
	if n := names(t, ""); n.Renamed() || n.Word() != "service" {
		t.Errorf("empty word is %q", n.Word())
	}
}

// The wrapper renames the toggles on the way in, the keys on the way out, and serves the
// circulating supply at /<word>/circulating.
func TestWrap(t *testing.T) {
	var gotPath, gotQuery string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotQuery = r.URL.Path, r.URL.RawQuery
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Content-Length", "999")
		_, _ = w.Write([]byte(upstream))
	})
	h := names(t, "acme").Wrap(next)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/intelligence/search?query=bin&acmeEntities=false&services=true", nil))
	if gotQuery != "query=bin&serviceEntities=false&services=true" || w.Body.String() != renamed || w.Header().Get("Content-Length") != "" {
		t.Errorf("query %q, body %s, Content-Length %q", gotQuery, w.Body, w.Header().Get("Content-Length"))
	}
	// An Upgrade header on a route that is not a stream skips nothing (the edge drops it later).
	up := httptest.NewRequest("GET", "/intelligence/search?query=bin&acmeEntities=false", nil)
	up.Header.Set("Upgrade", "websocket")
	up.Header.Set("Connection", "Upgrade")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, up)
	if gotQuery != "query=bin&serviceEntities=false" || w.Body.String() != renamed {
		t.Errorf("with Upgrade: query %q, body %s", gotQuery, w.Body)
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/acme/circulating", nil))
	if gotPath != NativeCirculating {
		t.Errorf("/acme/circulating reached %q", gotPath)
	}
	for path, want := range map[string]string{"/token/acme_exchange_tokens": ExchangeTokens,
		"/token/%61cme_exchange_tokens": ExchangeTokens, "/token/service_exchange_tokens": ExchangeTokens} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
		if gotPath != want {
			t.Errorf("%s reached %q, want %q", path, gotPath, want)
		}
	}
	// The default word changes nothing but the circulating path.
	w = httptest.NewRecorder()
	names(t, "service").Wrap(next).ServeHTTP(w, httptest.NewRequest("GET", "/service/circulating?serviceEntities=1", nil))
	if gotPath != NativeCirculating || gotQuery != "serviceEntities=1" || w.Body.String() != upstream {
		t.Errorf("default: path %q query %q body %s", gotPath, gotQuery, w.Body)
	}
}

func TestDocument(t *testing.T) {
	doc := []byte(`{"paths":{"/native/circulating":{"get":{"operationId":"getNativeCirculating"}},` +
		`"/token/service_exchange_tokens":{"get":{"operationId":"GetServiceExchangeTokens"}},` +
		`"/x":{"get":{"parameters":[{"name":"serviceEntities","description":"` + "`serviceEntities`" + ` toggle"}]}}},` +
		`"components":{"schemas":{"A":{"properties":{"serviceLabel":{}},"required":["serviceLabel"]}}}}`)
	got, err := names(t, "acme").Document(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	for _, want := range []string{`"/acme/circulating"`, `"getNativeCirculatingByOperatorPath"`,
		`"/token/acme_exchange_tokens"`, `"GetServiceExchangeTokensByOperatorPath"`, `"/token/service_exchange_tokens"`, `"name": "acmeEntities"`,
		"`acmeEntities` toggle", `"acmeLabel": {}`, `"acmeLabel"
        ]`} {
		if !strings.Contains(s, want) {
			t.Errorf("document lacks %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, "serviceLabel") || strings.Contains(s, "serviceEntities") {
		t.Errorf("document still names service*:\n%s", s)
	}
}

func FuzzKeyRewriter(f *testing.F) {
	f.Add([]byte(upstream), 3)
	f.Add([]byte(`{"a\\":"serviceX","serviceY":[]}`), 7)
	n := names(f, "acme")
	f.Fuzz(func(t *testing.T, doc []byte, split int) {
		if split < 0 || split > len(doc) {
			split = len(doc) / 2
		}
		whole := string(NewKeyRewriter(n).Rewrite(doc))
		rw := NewKeyRewriter(n)
		first := string(rw.Rewrite(doc[:split]))
		parts := first + string(rw.Rewrite(doc[split:]))
		if whole != parts {
			t.Fatalf("split %d changes the output: %q vs %q", split, whole, parts)
		}
		// Nothing but key prefixes changes: renaming back yields the input (up to a key still
		// open at the end, which is held).
		if strings.Contains(string(doc), `"acme`) {
			return
		}
		back := strings.ReplaceAll(whole, `"acme`, `"service`)
		if !strings.HasPrefix(string(doc), back) {
			t.Fatalf("round trip %q -> %q", doc, whole)
		}
	})
}

// The circulating path is translated in any encoding of its letters, as the edge routes every
// path by its canonical form (/%61cme/circulating is /acme/circulating); an encoded "/" is data
// inside a segment, so /acme%2Fcirculating is another path and is left alone.
func TestCirculatingPathInAnyEncoding(t *testing.T) {
	var gotPath, gotRaw string
	next := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { gotPath, gotRaw = r.URL.Path, r.URL.RawPath })
	for _, c := range []struct{ word, path, want string }{
		{"acme", "/%61cme/circulating", NativeCirculating},
		{"acme", "/acme/circul%41ting", "/acme/circulAting"},
		{"acme", "/acme%2Fcirculating", "/acme/circulating"},
		{"service", "/servic%65/circulating", NativeCirculating},
		{"service", "/service%2fcirculating", "/service/circulating"},
	} {
		gotPath, gotRaw = "", ""
		names(t, c.word).Wrap(next).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", c.path, nil))
		if gotPath != c.want || c.want == NativeCirculating && gotRaw != "" {
			t.Errorf("%s (word %s) reached %q (raw %q), want %q", c.path, c.word, gotPath, gotRaw, c.want)
		}
	}
}
