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

func TestRawQuery(t *testing.T) {
	cases := []struct{ in, want string }{
		{"tokens=usd-coin&timeLast=1h", ""},
		{"a=1&&b=%20x+y&c", ""},
		{"timeLast=1h%", "timeLast: holds an invalid percent-escape (a literal % is written %25)"},
		{"tokens=usd-coin%zz", "tokens: holds an invalid percent-escape (a literal % is written %25)"},
		{"time=1795651200000;", "time: holds a semicolon: query parameters are separated by ampersands only, and a semicolon in a value is written %3B"},
		{"a;b=1", "a;b: holds a semicolon: query parameters are separated by ampersands only, and a semicolon in a value is written %3B"},
		{"ch%zzains=base", `query parameter name: "ch%zzains" holds an invalid percent-escape`},
		{"a=%00", "a: must not contain a NUL character (byte 0)"},
		{"a=%3B", ""},
		// More parts than url.ParseQuery takes (empty ones count): URL.Query() would be empty.
		{"tokens=usd-coin&timeLast=1h" + strings.Repeat("&", 10000), "query string: number of URL query parameters exceeded limit"},
	}
	for _, c := range cases {
		_, err := RawQuery(c.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("RawQuery(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// RawQuery accepts exactly what url.ParseQuery parses without dropping a pair, with the same
// values, and refuses the rest with an error naming a parameter.
func FuzzRawQuery(f *testing.F) {
	for _, s := range []string{"a=1", "a=%", "a=1;b=2", "%zz=1", "a=1&a=2&b", "a=%3B&b=+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := RawQuery(raw)
		want, perr := url.ParseQuery(raw)
		if perr != nil {
			if err == nil {
				t.Fatalf("RawQuery(%q) accepted what url.ParseQuery drops part of (%v)", raw, perr)
			}
			if !IsParamError(err) {
				t.Fatalf("RawQuery(%q): %v is not a parameter error", raw, err)
			}
			return
		}
		if err != nil {
			if Query(want) == nil {
				t.Fatalf("RawQuery(%q) = %v, url.ParseQuery and Query accept it", raw, err)
			}
			return
		}
		if len(got) != len(want) {
			t.Fatalf("RawQuery(%q) = %v, url.ParseQuery %v", raw, got, want)
		}
		for k, vs := range want {
			if strings.Join(got[k], "\x00") != strings.Join(vs, "\x00") {
				t.Fatalf("RawQuery(%q)[%q] = %q, url.ParseQuery %q", raw, k, got[k], vs)
			}
		}
	})
}
