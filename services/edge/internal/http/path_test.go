package http_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	edgehttp "github.com/chainintel/chainintel/services/edge/internal/http"
	"github.com/chainintel/chainintel/services/edge/internal/keys"
	"github.com/chainintel/chainintel/services/edge/internal/proxy"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"github.com/gin-gonic/gin"
)

const authorisedHeader = "X-Test-Authorised-Route"

// recordingServices stands in for every service: one engine built as the services build theirs
// (httpx.NewEngine) holding every proxied route of the table and the services' internal routes.
// Each call records whether the route it served is the route the edge authorised (the edge's
// middleware names it in a header).
type recordingServices struct {
	mu        sync.Mutex
	served    int
	misrouted []string
}

func newRecordingServices(t *testing.T) *httptest.Server {
	rs := &recordingServices{}
	e := httpx.NewEngine(httpx.EngineOptions{Service: "recorder"})
	byGin := map[string]string{}
	register := func(method, pattern string) {
		// gin needs one wildcard name per position; name wildcards by their segment index.
		segs := strings.Split(pattern, "/")
		for i, s := range segs {
			if strings.HasPrefix(s, "{") {
				segs[i] = fmt.Sprintf(":p%d", i)
			}
		}
		gp := strings.Join(segs, "/")
		byGin[method+" "+gp] = method + " " + pattern
		e.Handle(method, gp, func(c *gin.Context) {
			served := byGin[c.Request.Method+" "+c.FullPath()]
			rs.record(c.Request, served)
			c.JSON(http.StatusOK, gin.H{"served": served})
		})
	}
	for _, rt := range routes.Table {
		if rt.Service != routes.Edge {
			register(rt.Method, rt.Pattern)
		}
	}
	for _, p := range []string{"/internal/lookup", "/internal/entities/{id}", "/internal/shared/entities/{id}", "/internal/additions/{id}"} {
		register(http.MethodGet, p)
		register(http.MethodPost, p)
	}
	e.NoRoute(func(c *gin.Context) {
		rs.record(c.Request, "no route")
		c.JSON(http.StatusNotFound, gin.H{"error": "no route"})
	})
	srv := httptest.NewServer(e)
	t.Cleanup(func() {
		srv.Close()
		rs.mu.Lock()
		defer rs.mu.Unlock()
		for _, m := range rs.misrouted {
			t.Error(m)
		}
		t.Logf("%d calls reached a service, each the route the edge authorised", rs.served)
	})
	return srv
}

func (rs *recordingServices) record(r *http.Request, served string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.served++
	if auth := r.Header.Get(authorisedHeader); auth != served {
		rs.misrouted = append(rs.misrouted, fmt.Sprintf("%s %s: the edge authorised %q, the service served %q", r.Method, r.RequestURI, auth, served))
	}
}

type anyKey struct{}

func (anyKey) Verify(_ context.Context, raw string) (httpx.Identity, error) {
	if raw != "good" {
		return httpx.Identity{}, keys.ErrInvalid
	}
	return httpx.Identity{KeyID: "k", UserID: "u", Role: "individual", Tier: "free"}, nil
}

// pathTestEdge is the edge's real handler (route table, authentication, proxies) with one
// middleware that names the authorised route to the services.
func pathTestEdge(t *testing.T) http.Handler {
	svc := newRecordingServices(t)
	signer := httpx.NewSigner("path-test-secret-0123456789")
	ups := map[routes.Service]http.Handler{}
	for _, s := range routes.Upstreams {
		p, err := proxy.New(proxy.Options{Service: string(s), Target: svc.URL, Signer: signer})
		if err != nil {
			t.Fatal(err)
		}
		ups[s] = p
	}
	name := func(rt routes.Route, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Set(authorisedHeader, rt.Key())
			next.ServeHTTP(w, r)
		})
	}
	h, err := edgehttp.NewHandler(edgehttp.Options{Routes: routes.Table, Upstreams: ups, Own: map[string]http.Handler{},
		Keys: anyKey{}, Middlewares: []edgehttp.Middleware{name}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// concrete fills a pattern's wildcards.
func concrete(pattern string) string {
	segs := strings.Split(pattern, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			segs[i] = fmt.Sprintf("v%d", i)
		}
	}
	return strings.Join(segs, "/")
}

// pathVariants are ways of writing "from the path so far, go to target" that a path resolver
// could honour: dot segments and separators in every encoding, doubled slashes, NULs.
func pathVariants(prefix, target string) []string {
	depth := strings.Count(prefix, "/")
	climb := func(dots, sep string) string { return strings.Repeat(dots+sep, depth) }
	t := strings.TrimPrefix(target, "/")
	var out []string
	for _, dots := range []string{"..", "%2e%2e", "%2E%2E", ".%2e", "%2e."} {
		for _, sep := range []string{"/", "%2f", "%2F", "%5c", "%5C", "\\"} {
			enc := strings.ReplaceAll(t, "/", sep)
			out = append(out, prefix+"/"+climb(dots, sep)+enc)
		}
	}
	out = append(out,
		prefix+"/."+target, prefix+"/%2e"+target, prefix+"%2f..%2f"+t, prefix+"/"+climb("..", "/")+"/"+t,
		prefix+"%00/"+climb("..", "/")+t, prefix+"%00", "/"+prefix, prefix+"//", strings.Replace(prefix, "/", "//", 2),
		prefix+";/"+climb("..", "/")+t, prefix+"%3b/"+climb("..", "/")+t, prefix+"%23/../"+t, prefix+"?/../"+t,
	)
	return out
}

// TestEveryRouteServesOnlyWhatTheEdgeAuthorised walks every route of the table, writes its path
// (and each of its wildcard positions) followed by a way back to another route — the API-tier
// histogram, a keyed route, a heavy route, the next route of the table, internal routes — in
// every encoding, with and without a key, and checks that whatever reached a service was served
// as the route the edge authorised.
func TestEveryRouteServesOnlyWhatTheEdgeAuthorised(t *testing.T) {
	h := pathTestEdge(t)
	targets := []string{"/transfers/histogram", "/intelligence/entity/x", "/transfers", "/internal/lookup", "/internal/entities/x"}
	statuses := map[int]int{}
	sent := 0
	for i, rt := range routes.Table {
		next := concrete(routes.Table[(i+1)%len(routes.Table)].Pattern)
		path := concrete(rt.Pattern)
		segs := strings.Split(path, "/")
		var prefixes []string
		for j := 2; j <= len(segs); j++ { // every prefix of the path, the whole path included
			prefixes = append(prefixes, strings.Join(segs[:j], "/"))
		}
		for _, target := range append(targets, next) {
			for _, prefix := range prefixes {
				for _, v := range pathVariants(prefix, target) {
					for _, key := range []string{"", "good"} {
						u, err := url.ParseRequestURI(v) // as the server reads a request line
						if err != nil {
							continue // the server answers 400 itself
						}
						r := httptest.NewRequest(rt.Method, "/", nil)
						r.URL, r.RequestURI = u, v
						if key != "" {
							r.Header.Set("API-Key", key)
						}
						w := httptest.NewRecorder()
						h.ServeHTTP(w, r)
						statuses[w.Code]++
						sent++
					}
				}
			}
		}
	}
	t.Logf("%d requests over %d routes: statuses %v", sent, len(routes.Table), statuses)
}

// Path examples: what the edge answers and what it forwards.
func TestPathVariantsRefusedOrForwardedCanonical(t *testing.T) {
	h := pathTestEdge(t)
	cases := []struct{ method, path, key, want string }{
		// An encoded "/" is data inside its segment: the flow handler gets the whole value.
		{"GET", "/flow/address/..%2f..%2ftransfers%2fhistogram", "good", `{"served":"GET /flow/address/{address}"}`},
		{"GET", "/token/balance/EQ%2Fab+c", "good", `{"served":"GET /token/balance/{id}"}`},
		{"GET", "/flow/address/%2e%2e/%2e%2e/transfers/histogram", "good", `{"error":"path segment 3 (\"%2e%2e\") is a dot segment"}`},
		{"GET", "/flow/address/../../transfers/histogram", "good", `{"error":"path segment 3 (\"..\") is a dot segment"}`},
		{"GET", "/intelligence/entity/x/summary/%2e%2e", "", `{"error":"path segment 5 (\"%2e%2e\") is a dot segment"}`},
		{"GET", "/intelligence/entity/x%5c..%5csummary", "", `{"error":"path segment 3 (\"x%5c..%5csummary\") holds a backslash"}`},
		{"GET", "/flow//address/x", "good", `{"error":"path segment 2 (\"\") is empty (\"//\")"}`},
		{"GET", "/flow/address/x%00", "good", `{"error":"path segment 3 (\"x%00\") holds a control character (%00)"}`},
		// A 404 echoes the path as received, never decoded: "..%2f" is not shown as "../".
		{"POST", "/%69nternal/lookup", "good", `{"error":"no route for /%69nternal/lookup"}`},
		{"GET", "/user/..%2f..%2finternal%2flabels", "good", `{"error":"no route for /user/..%2f..%2finternal%2flabels"}`},
		{"DELETE", "/no/such/%2e%2Fthing?x=%2f..", "good", `{"error":"no route for /no/such/%2e%2Fthing"}`},
		{"GET", "/user/%6Cabels", "good", `{"served":"GET /user/labels"}`},
		{"GET", "/transfers/histogram/", "good", `{"error":"no route for /transfers/histogram/"}`},
		// A query pair url.Values would drop is refused, not forwarded as a wider question.
		{"GET", "/flow/address/x?timeLast=1h%", "good", `{"error":"timeLast: holds an invalid percent-escape (a literal % is written %25)"}`},
		{"GET", "/flow/address/x?chains=base;x", "good", `{"error":"chains: holds a semicolon: query parameters are separated by ampersands only, and a semicolon in a value is written %3B"}`},
		{"GET", "/flow/address/x?chains=base%3Bx", "good", `{"served":"GET /flow/address/{address}"}`},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, c.path, nil)
		if c.key != "" {
			r.Header.Set("API-Key", c.key)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := strings.TrimSpace(w.Body.String()); got != c.want {
			t.Errorf("%s %s: %d %s, want %s", c.method, c.path, w.Code, got, c.want)
		}
	}
}

func TestCanonicalPath(t *testing.T) {
	cases := []struct{ in, decoded, canonical, err string }{
		{"/flow/address/0xabc", "/flow/address/0xabc", "/flow/address/0xabc", ""},
		{"/a/%41%2fb%2Bc+d,e;f:g@h", "/a/A/b+c+d,e;f:g@h", "/a/A%2Fb+c+d,e;f:g@h", ""},
		{"/a/%C3%A9 x", "/a/é x", "/a/%C3%A9%20x", ""},
		{"/a/", "/a/", "/a/", ""},
		{"/", "/", "/", ""},
		{"/a/.%2E/b", "", "", `path segment 2 (".%2E") is a dot segment`},
		{"/a/./b", "", "", `path segment 2 (".") is a dot segment`},
		{"/a//b", "", "", `path segment 2 ("") is empty ("//")`},
		{"/a/b%7f", "", "", `path segment 2 ("b%7f") holds a control character (%7F)`},
		{"/a/%zz", "", "", `path segment 2 ("%zz") is not valid percent-encoding`},
		{"a/b", "", "", `path segment 0 ("a/b") does not start with /`},
	}
	for _, c := range cases {
		d, can, err := edgehttp.CanonicalPath(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || d != c.decoded || can != c.canonical {
			t.Errorf("%q: %q %q %v, want %q %q", c.in, d, can, err, c.decoded, c.canonical)
		}
	}
}

func FuzzCanonicalPath(f *testing.F) {
	for _, s := range []string{"/flow/address/..%2f..%2ftransfers%2fhistogram", "/a/%2e%2e/b", "/a//b", "/a/%00", "/a/%5c",
		"/token/balance/EQ%2Fab+c", "/user/%6Cabels", "/", "/a/", "/%C3%A9/%ff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		d, can, err := edgehttp.CanonicalPath(in)
		if err != nil {
			return
		}
		// The canonical form is stable, decodes to the decoded path segment by segment, and has
		// exactly as many segments as the input; no segment of it is a dot segment or empty
		// (but a trailing one), and it holds no character a resolver could split or stop on.
		d2, can2, err := edgehttp.CanonicalPath(can)
		if err != nil || d2 != d || can2 != can {
			t.Fatalf("%q → %q → %q %q %v", in, can, d2, can2, err)
		}
		if strings.Count(can, "/") != strings.Count(in, "/") {
			t.Fatalf("%q → %q changed the segments", in, can)
		}
		segs := strings.Split(can, "/")[1:]
		for i, s := range segs {
			if s == "." || s == ".." || (s == "" && i < len(segs)-1) || strings.ContainsAny(s, "\\?# \x00") {
				t.Fatalf("%q → %q has segment %q", in, can, s)
			}
		}
	})
}

func BenchmarkCanonicalPath(b *testing.B) {
	for _, p := range []string{"/intelligence/address/0x28c6c06298d514db089934071355e5743bf21d60", "/token/balance/EQ%2Fab+c"} {
		b.Run(p[:14], func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := edgehttp.CanonicalPath(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
