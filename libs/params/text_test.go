package params

import (
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"binance", ""},
		{"Ünïcødé 🙂", ""},
		{"a\x00b", "x: must not contain a NUL character (byte 1)"},
		{"ab\xff", "x: is not valid UTF-8 (byte 2)"},
		{"\xc3\x28", "x: is not valid UTF-8 (byte 0)"},
		{"\xed\xa0\x80", "x: is not valid UTF-8 (byte 0)"}, // a UTF-16 surrogate
	}
	for _, c := range cases {
		err := Text("x", c.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if err := Query(url.Values{"b": {"ok"}, "a": {"x\x00"}, "c": {"\xff"}}); err == nil || err.Error() != "a: must not contain a NUL character (byte 1)" {
		t.Errorf("Query: %v", err)
	}
}

// Year 1 (Go's zero time) and anything before 1970 are refused, not read as an open bound.
func TestTimeRange(t *testing.T) {
	for _, s := range []string{"0001-01-01T00:00:00Z", "1969-12-31T23:59:59.999Z", "-62135596800000", "-1", "253402300800000"} {
		if _, err := Time(s); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("Time(%q): %v, want out of range", s, err)
		}
	}
	for _, s := range []string{"0", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "253402300799999"} {
		if _, err := Time(s); err != nil {
			t.Errorf("Time(%q): %v", s, err)
		}
	}
	if _, err := TimeWindow(url.Values{"timeGte": {"0001-01-01T00:00:00Z"}}, time.Now()); err == nil || !strings.HasPrefix(err.Error(), "timeGte: ") {
		t.Errorf("year-1 timeGte: %v", err)
	}
}

// Text accepts exactly the valid UTF-8 strings without NUL, and names the first bad byte.
func FuzzText(f *testing.F) {
	for _, s := range []string{"", "abc", "a\x00", "\xff", "é", "\xc3", "🙂\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := Text("p", s)
		ok := utf8.ValidString(s) && !strings.ContainsRune(s, 0)
		if (err == nil) != ok {
			t.Fatalf("Text(%q) = %v, valid=%v", s, err, ok)
		}
		if err != nil && (!IsParamError(err) || !strings.HasPrefix(err.Error(), "p: ")) {
			t.Fatalf("error does not name the parameter: %v", err)
		}
	})
}

// Query never lets a bad name or value through.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"a=1", "a=%00", "%ff=1", "a=1&b=%c3%28", "timeGte=0001-01-01T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		bad := false
		for k, vs := range q {
			for _, s := range append([]string{k}, vs...) {
				if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
					bad = true
				}
			}
		}
		if (Query(q) != nil) != bad {
			t.Fatalf("Query(%q) = %v, bad=%v", raw, Query(q), bad)
		}
	})
}
