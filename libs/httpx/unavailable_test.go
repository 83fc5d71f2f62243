package httpx_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Every dependency outage classifies as one 503 naming the dependency; the caller's mistakes
// keep their status; the rest is a 500 that shows nothing.
func TestClassify(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://postgres@127.0.0.1:5432/postgres")
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	_, closedErr := pool.Exec(context.Background(), "SELECT 1")

	cases := []struct {
		err    error
		status int
		msg    string
		retry  bool
	}{
		{httpx.BadRequest("limit: must be at most 10"), 400, "limit: must be at most 10", false},
		{httpx.Unavailable("user-labels", errors.New("dial")), 503, "user-labels is unavailable; retry later", true},
		{fmt.Errorf("lookup: %w", httpx.Unavailable("Redis", errors.New("EOF"))), 503, "Redis is unavailable; retry later", true},
		{fmt.Errorf("list transfers: %w", closedErr), 503, "PostgreSQL is unavailable; retry later", true},
		{fmt.Errorf("x: %w", context.Canceled), 499, "request cancelled", false},
		{errors.New("boom"), 500, "internal error", false},
	}
	for _, c := range cases {
		status, msg, retry := httpx.Classify(c.err)
		if status != c.status || msg != c.msg || retry != c.retry {
			t.Errorf("Classify(%v) = %d %q %v, want %d %q %v", c.err, status, msg, retry, c.status, c.msg, c.retry)
		}
	}
}

// The internal client reports a service that does not answer, or answers 5xx, as that
// service's outage; a 4xx stays the callee's answer.
func TestInternalClientOutages(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	_ = ln.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			httpx.WriteError(w, 400, "nope")
			return
		}
		w.Header().Set("Retry-After", "1")
		httpx.WriteError(w, 503, "PostgreSQL is unavailable; retry later")
	}))
	t.Cleanup(failing.Close)
	for _, base := range []string{dead, failing.URL} {
		c, err := httpx.NewInternalClient("user-labels", base, nil, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		err = c.Do(context.Background(), "GET", "/x", nil, nil, nil)
		var ue *httpx.UnavailableError
		if !errors.As(err, &ue) || ue.Dependency != "user-labels" || !errors.Is(err, httpx.ErrUnavailable) {
			t.Fatalf("%s: got %v, want a user-labels outage", base, err)
		}
	}
	c, _ := httpx.NewInternalClient("user-labels", failing.URL, nil, nil, 0)
	err = c.Do(context.Background(), "GET", "/bad", nil, nil, nil)
	var up *httpx.UpstreamError
	if !errors.As(err, &up) || up.Status != 400 || errors.Is(err, httpx.ErrUnavailable) {
		t.Fatalf("4xx: got %v, want the callee's 400", err)
	}
}
