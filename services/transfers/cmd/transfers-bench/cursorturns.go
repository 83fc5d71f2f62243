package main

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"time"
)

// cursorTurns returns the paths of clients paging on with cursors (includeCursors=true, each
// turn passing the previous page's nextCursor), and what reads each answer. A client starts at a
// random time of the loaded span (timeLte, kept on every turn: the cursor belongs to that query)
// and turns turnsPerClient pages; its first page is served here, untimed: it is not a turn.
func cursorTurns(r http.Handler, w *world, rng *rand.Rand, ex func() string) (path func() string, seen func([]byte)) {
	const turnsPerClient = 10
	var q url.Values
	left := 0
	next := func(body []byte) string {
		var out struct {
			NextCursor string `json:"nextCursor"`
		}
		if json.Unmarshal(body, &out) != nil {
			return ""
		}
		return out.NextCursor
	}
	path = func() string {
		for tries := 0; left == 0; tries++ {
			t := w.cfg.Start.Add(time.Duration(rng.Int64N(int64(w.end.Sub(w.cfg.Start)))))
			q = url.Values{"base": {ex()}, "limit": {"50"}, "includeCursors": {"true"}, "timeLte": {strconv.FormatInt(t.UnixMilli(), 10)}}
			if tries == 100 {
				return "/transfers?" + q.Encode() // a world too small for full pages: first pages it is
			}
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/transfers?"+q.Encode(), nil))
			if c := next(rec.Body.Bytes()); c != "" {
				q.Set("cursor", c)
				left = turnsPerClient
			}
		}
		left--
		return "/transfers?" + q.Encode()
	}
	seen = func(body []byte) {
		if c := next(body); c != "" {
			q.Set("cursor", c)
		} else {
			left = 0
		}
	}
	return path, seen
}
