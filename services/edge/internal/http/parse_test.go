package http

import (
	"encoding/json"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestParseWindow(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 30, 0, 0, time.UTC)
	ts := func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v }
	cases := []struct {
		query string
		want  Window
		err   string
	}{
		{"", Window{"24h", now.Add(-24 * time.Hour), now}, ""},
		{"period=7d", Window{"7d", now.Add(-7 * 24 * time.Hour), now}, ""},
		{"period=30d", Window{"30d", now.Add(-30 * 24 * time.Hour), now}, ""},
		{"period=24h&end_date=2026-01-02T00:00:00Z", Window{"24h", ts("2026-01-01T00:00:00Z"), ts("2026-01-02T00:00:00Z")}, ""},
		{"end_date=2026-01-02T00:00:00%2B02:00", Window{"24h", ts("2025-12-31T22:00:00Z"), ts("2026-01-01T22:00:00Z")}, ""},
		{"start_date=2025-01-01T00:00:00Z&end_date=2026-01-02T00:00:00Z", Window{"custom", ts("2025-01-01T00:00:00Z"), ts("2026-01-02T00:00:00Z")}, ""},
		{"start_date=2025-01-01T00:00:00Z&end_date=2026-01-02T00:00:01Z", Window{}, "start_date, end_date: the range must be at most 366 days"},
		{"start_date=2025-01-01T00:00:00Z", Window{}, "start_date: needs end_date (a custom range takes both; for a period ending now, give period alone)"},
		{"start_date=2025-01-01T00:00:00Z&period=7d", Window{}, "start_date: needs end_date (a custom range takes both; for a period ending now, give period alone)"},
		{"start_date=2026-01-02T00:00:00Z&end_date=2026-01-01T00:00:00Z", Window{}, "start_date: must be before end_date"},
		{"period=7d&start_date=2026-01-01T00:00:00Z&end_date=2026-01-02T00:00:00Z", Window{"custom", ts("2026-01-01T00:00:00Z"), ts("2026-01-02T00:00:00Z")}, ""},
		{"period=1h&start_date=2026-01-01T00:00:00Z&end_date=2026-01-02T00:00:00Z", Window{"custom", ts("2026-01-01T00:00:00Z"), ts("2026-01-02T00:00:00Z")}, ""},
		{"period=1h", Window{}, `period: "1h" is not one of 24h, 7d, 30d`},
		{"end_date=yesterday", Window{}, `end_date: "yesterday" is not an RFC 3339 time (e.g. 2026-01-02T15:04:05Z)`},
		{"period=24h&period=7d", Window{}, "period: give it once"},
		// Years JSON cannot write, or before anything is recorded, before or after the offset
		// and the period are applied.
		{"end_date=0000-01-01T00:00:00Z", Window{}, `end_date: "0000-01-01T00:00:00Z" is out of range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z)`},
		{"end_date=9999-12-31T23:59:59-10:00", Window{}, `end_date: "9999-12-31T23:59:59-10:00" is out of range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z)`},
		{"start_date=0000-01-01T00:00:00%2B01:00&end_date=0000-01-02T00:00:00Z", Window{}, `start_date: "0000-01-01T00:00:00+01:00" is out of range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z)`},
		{"start_date=1969-12-31T23:59:59Z&end_date=1970-01-02T00:00:00Z", Window{}, `start_date: "1969-12-31T23:59:59Z" is out of range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z)`},
		{"period=30d&end_date=1970-01-02T00:00:00Z", Window{}, "end_date: the 30d period before it starts out of range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z)"},
		{"end_date=9999-12-31T23:59:59.5Z", Window{"24h", ts("9999-12-30T23:59:59.5Z"), ts("9999-12-31T23:59:59.5Z")}, ""},
		{"start_date=1970-01-01T00:00:00Z&end_date=1970-01-02T00:00:00Z", Window{"custom", ts("1970-01-01T00:00:00Z"), ts("1970-01-02T00:00:00Z")}, ""},
	}
	for _, c := range cases {
		q, _ := url.ParseQuery(c.query)
		got, err := ParseWindow(q, now)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %q", c.query, err, c.err)
			}
			continue
		}
		if err != nil || got.Period != c.want.Period || !got.Start.Equal(c.want.Start) || !got.End.Equal(c.want.End) {
			t.Errorf("%q: %+v %v, want %+v", c.query, got, err, c.want)
		}
	}
}

func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"", "period=7d", "start_date=2025-01-01T00:00:00Z&end_date=2026-01-02T00:00:00Z",
		"end_date=2026-01-02T00:00:00%2B02:00", "period=%00", "start_date=9999-12-31T23:59:59Z&end_date=0000-01-01T00:00:00Z",
		"start_date=2025-01-01T00:00:00Z&period=7d", "end_date=0000-01-01T00:00:00Z", "end_date=9999-12-31T23:59:59-10:00",
		"start_date=0000-01-01T00:00:00%2B01:00&end_date=0000-01-02T00:00:00Z", "period=30d&end_date=1970-01-02T00:00:00Z"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 10, 12, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		w, err := ParseWindow(q, now)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "period") && !strings.HasPrefix(msg, "start_date") && !strings.HasPrefix(msg, "end_date") {
				t.Fatalf("error does not name the parameter: %q", msg)
			}
			return
		}
		if q.Get("start_date") != "" && q.Get("end_date") == "" {
			t.Fatalf("a lone start_date answered the window %+v", w)
		}
		if !w.Start.Before(w.End) || w.End.Sub(w.Start) > MaxCustomRange {
			t.Fatalf("window %+v out of bounds", w)
		}
		// What a response carries must be writable as JSON (years 0 to 9999).
		if _, err := json.Marshal(w); err != nil {
			t.Fatalf("window %+v: %v", w, err)
		}
		if w.Start.Before(time.Unix(0, 0)) || w.End.Year() > 9999 {
			t.Fatalf("window %+v out of range", w)
		}
		if w.Period != "custom" && w.Period != "24h" && w.Period != "7d" && w.Period != "30d" {
			t.Fatalf("period %q", w.Period)
		}
	})
}

func TestClientIP(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	cases := []struct {
		remote string
		xff    []string
		want   string
	}{
		{"203.0.113.5:1234", nil, "203.0.113.5"},
		{"203.0.113.5:1234", []string{"1.2.3.4"}, "203.0.113.5"}, // untrusted peer: XFF ignored
		{"10.1.2.3:80", []string{"198.51.100.7"}, "198.51.100.7"},
		{"10.1.2.3:80", []string{"6.6.6.6, 198.51.100.7"}, "198.51.100.7"},   // spoofed left part ignored
		{"10.1.2.3:80", []string{"198.51.100.7, 10.9.9.9"}, "198.51.100.7"},  // chain of trusted proxies
		{"10.1.2.3:80", []string{"6.6.6.6", "198.51.100.7"}, "198.51.100.7"}, // several headers: last wins
		{"10.1.2.3:80", []string{"10.2.2.2, 10.3.3.3"}, "10.2.2.2"},          // all trusted: leftmost
		{"10.1.2.3:80", []string{"garbage, 198.51.100.7"}, "198.51.100.7"},   // junk beyond the client
		{"10.1.2.3:80", []string{"198.51.100.7, garbage"}, "10.1.2.3"},       // junk appended by our proxy? stop
		{"10.1.2.3:80", nil, "10.1.2.3"},                                     // trusted peer, no header
		{"[::1]:80", []string{"2001:db8::1"}, "2001:db8::/64"},               // IPv6: its /64
		{"[2001:db8:0:1::5]:1234", nil, "2001:db8:0:1::/64"},                 // any address of a /64 is one client
		{"[2001:db8:0:1:ffff::9]:1234", nil, "2001:db8:0:1::/64"},
		{"[2001:db8:0:2::5]:1234", nil, "2001:db8:0:2::/64"},
		{"[::ffff:10.1.2.3]:80", []string{"198.51.100.9"}, "198.51.100.9"}, // v4-mapped peer
		{"not-an-address", nil, "not-an-address"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/health", nil)
		r.RemoteAddr = c.remote
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := ClientIP(r, trusted); got != c.want {
			t.Errorf("%s %v: %s, want %s", c.remote, c.xff, got, c.want)
		}
	}
}

func FuzzClientIP(f *testing.F) {
	f.Add("10.1.2.3:80", "198.51.100.7, 10.9.9.9")
	f.Add("203.0.113.5:1234", "1.2.3.4")
	f.Add("[::1]:80", "2001:db8::1, ,,")
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	f.Fuzz(func(t *testing.T, remote, xff string) {
		r := httptest.NewRequest("GET", "/health", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", xff)
		got := ClientIP(r, trusted)
		// An untrusted peer is always the client, whatever the header says.
		if a, err := netip.ParseAddrPort(remote); err == nil && !isTrusted(a.Addr().Unmap(), trusted) && got != budgetAddr(a.Addr().Unmap()) {
			t.Fatalf("untrusted peer %s reported as %s", remote, got)
		}
	})
}
