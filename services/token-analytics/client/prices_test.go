package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/token-analytics/client"
)

// PriceWindow posts the ids and the window in milliseconds and reads the points; a 503 (the
// imports at start still running) is an outage the caller retries, not an empty answer.
func TestPriceWindow(t *testing.T) {
	importing := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/internal/prices/window" || r.Method != http.MethodPost || string(b) != `{"ids":["ethereum","nope"],"fromMs":1000,"toMs":2000}` {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if importing {
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":"the token list and price imports are not finished; retry later"}`))
			return
		}
		_, _ = w.Write([]byte(`{"prices":{"ethereum":[{"timeMs":1000,"price":1500.5}]}}`))
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	from, to := time.UnixMilli(1000), time.UnixMilli(2000)
	if _, err := c.PriceWindow(ctx, []string{"ethereum", "nope"}, from, to); !errors.Is(err, httpx.ErrUnavailable) {
		t.Fatalf("importing: %v", err)
	}
	importing = false
	ps, err := c.PriceWindow(ctx, []string{"ethereum", "nope"}, from, to)
	if want := map[string][]client.PricePoint{"ethereum": {{TimeMs: 1000, Price: 1500.5}}}; err != nil || !reflect.DeepEqual(ps, want) {
		t.Fatalf("got %v %v", ps, err)
	}
}
