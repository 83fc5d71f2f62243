package http

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// POST /internal/prices/window answers each id's points in the window, oldest first, one per
// time (the hourly one of two at the same time); ids without points are absent; bad bodies are
// a 400 naming the field. Whole bodies.
func TestPriceWindow(t *testing.T) {
	e := newEnv(t, app.Native{})
	day := time.Date(2021, 3, 1, 0, 0, 0, 0, time.UTC)
	e.prices(
		app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: day.Add(-24 * time.Hour), Price: 1400},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: day, Price: 1500},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Hourly, Time: day, Price: 1501},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Hourly, Time: day.Add(time.Hour), Price: 1510},
		app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: day.Add(48 * time.Hour), Price: 1600},
		app.PricePoint{PricingID: "usd-coin", Granularity: app.Daily, Time: day, Price: 1.001},
	)
	from, to := day.Add(-time.Hour).UnixMilli(), day.Add(24*time.Hour).UnixMilli()
	body := func(ids string, from, to int64) string {
		return `{"ids":` + ids + `,"fromMs":` + itoa(from) + `,"toMs":` + itoa(to) + `}`
	}
	d := day.UnixMilli()
	many := `["a"` + strings.Repeat(`,"a"`, app.MaxWindowIDs) + `]`
	cases := []struct {
		body   string
		status int
		want   string
	}{
		{body(`["ethereum","usd-coin","nope"]`, from, to), 200, `{"prices":{"ethereum":[{"timeMs":` + itoa(d) + `,"price":1501},{"timeMs":` + itoa(d+3600000) +
			`,"price":1510}],"usd-coin":[{"timeMs":` + itoa(d) + `,"price":1.001}]}}`},
		{body(`["nope"]`, from, to), 200, `{"prices":{}}`},
		{body(`[]`, from, to), 200, `{"prices":{}}`},
		{body(`["a b"]`, from, to), 400, `{"error":"ids: \"a b\" must be a pricing id such as ethereum"}`},
		{body(many, from, to), 400, `{"error":"ids: more than 1000"}`},
		{`{"ids":["ethereum"],"toMs":1}`, 400, `{"error":"fromMs: required (milliseconds since the epoch)"}`},
		{`{"ids":["ethereum"],"fromMs":1}`, 400, `{"error":"toMs: required (milliseconds since the epoch)"}`},
		{body(`["ethereum"]`, to, from), 400, `{"error":"toMs: must not be before fromMs"}`},
		{body(`["ethereum"]`, from, from+app.MaxWindow.Milliseconds()+1), 400, `{"error":"toMs: the window from fromMs is longer than 168h"}`},
	}
	for _, c := range cases {
		code, got := e.post("/internal/prices/window", c.body)
		if code != c.status {
			t.Fatalf("%.80s: status %d, want %d; body %s", c.body, code, c.status, got)
		}
		sameJSON(t, c.body, got, c.want)
	}
}

// Until the imports at start are done the route answers 503 with Retry-After: a point they
// bring could still be missing.
func TestPriceWindowWhileImporting(t *testing.T) {
	e := newEnv(t, app.Native{})
	set, _ := chains.NewSet(nil)
	eng := httpx.NewEngine(httpx.EngineOptions{Service: "token-analytics"})
	svc := app.New(e.store, app.Options{})
	Register(eng, svc, set)
	post := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/internal/prices/window", strings.NewReader(`{"ids":["ethereum"],"fromMs":0,"toMs":1}`))
		r.Header.Set("Content-Type", "application/json")
		eng.ServeHTTP(w, r)
		return w
	}
	w := post()
	if w.Code != 503 || w.Header().Get("Retry-After") != "5" {
		t.Fatalf("importing: %d %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	sameJSON(t, "importing", w.Body.String(), `{"error":"the token list and price imports are not finished; retry later"}`)
	svc.MarkImported()
	if w := post(); w.Code != 200 {
		t.Fatalf("imported: %d %s", w.Code, w.Body)
	} else {
		sameJSON(t, "imported", w.Body.String(), `{"prices":{}}`)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
