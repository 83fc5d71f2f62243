package params

import (
	"math"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chainintel/chainintel/libs/chains"
)

func TestList(t *testing.T) {
	q := url.Values{"chains": {"ethereum, base", "base", "polygon,,"}}
	got, err := List(q, "chains")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ethereum", "base", "polygon"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	if got, _ := List(url.Values{}, "chains"); got != nil {
		t.Fatal("absent should be nil")
	}
	many := strings.Repeat("a,", 2000)
	if _, err := List(url.Values{"x": {many}}, "x"); err != nil {
		t.Fatal("duplicates should not count:", err)
	}
}

func TestTimeWindow(t *testing.T) {
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		q       string
		from    time.Time
		to      time.Time
		errPart string
	}{
		{q: "timeLast=7d", from: now.Add(-7 * 24 * time.Hour), to: now},
		{q: "timeLast=1h", from: now.Add(-time.Hour), to: now},
		{q: "timeGte=1700000000000", from: time.UnixMilli(1700000000000).UTC()},
		{q: "timeGte=2026-01-01T00:00:00Z&timeLte=2026-01-02T00:00:00Z", from: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), to: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)},
		{q: "timeLast=7d&timeGte=1", errPart: "timeLast: cannot be combined"},
		{q: "timeLast=7x", errPart: "timeLast:"},
		{q: "timeLast=-1d", errPart: "timeLast:"},
		{q: "timeGte=yesterday", errPart: "timeGte:"},
		{q: "timeGte=2000&timeLte=1000", errPart: "timeGte: must not be after"},
		{q: "timeLte=1&timeLte=2", errPart: "timeLte: given 2 times"},
	}
	for _, tc := range tests {
		q, _ := url.ParseQuery(tc.q)
		w, err := TimeWindow(q, now)
		if tc.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errPart) || !IsParamError(err) {
				t.Errorf("%s: err %v, want %q", tc.q, err, tc.errPart)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.q, err)
			continue
		}
		if !w.From.Equal(tc.from) || !w.To.Equal(tc.to) {
			t.Errorf("%s: got %v..%v", tc.q, w.From, w.To)
		}
	}
}

func TestIntAndEnum(t *testing.T) {
	q := url.Values{"limit": {"1001"}, "sortKey": {"value"}}
	if _, err := Int(q, "limit", 50, 1, 1000); err == nil || !strings.Contains(err.Error(), "between 1 and 1000") {
		t.Fatal(err)
	}
	if n, _ := Int(url.Values{}, "limit", 50, 1, 1000); n != 50 {
		t.Fatal(n)
	}
	if v, err := Enum(q, "sortKey", "time", "time", "value", "usd"); err != nil || v != "value" {
		t.Fatal(v, err)
	}
	if _, err := Enum(url.Values{"sortKey": {"size"}}, "sortKey", "time", "time", "value"); err == nil {
		t.Fatal("want error")
	}
	if _, _, err := FloatRange(url.Values{"usdGte": {"5"}, "usdLte": {"1"}}, "usdGte", "usdLte"); err == nil {
		t.Fatal("inverted range accepted")
	}
}

func FuzzTimeWindow(f *testing.F) {
	for _, s := range []string{"timeLast=7d", "timeGte=1&timeLte=2", "timeLast=1h30m", "timeGte=2026-01-01T00:00:00Z", "timeLast=99999999d", "timeLte=-5"} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		w, err := TimeWindow(q, now)
		if err != nil {
			if !IsParamError(err) {
				t.Fatalf("error is not a parameter error: %v", err)
			}
			return
		}
		if !w.From.IsZero() && !w.To.IsZero() && w.From.After(w.To) {
			t.Fatalf("inverted window %v", w)
		}
	})
}

func FuzzList(f *testing.F) {
	f.Add("a,b,,c")
	f.Add(" , ")
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := List(url.Values{"x": {raw}}, "x")
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, v := range got {
			if v == "" || strings.Contains(v, ",") || seen[v] || strings.TrimSpace(v) != v {
				t.Fatalf("bad item %q in %q", v, got)
			}
			seen[v] = true
		}
	})
}

// A float bound is a finite number: ParseFloat reads "NaN", "Inf" and "-Infinity", and a bound of
// either is refused naming the parameter, as a value out of float64's range is.
func TestFloatFinite(t *testing.T) {
	for s, want := range map[string]string{
		"1.5":       "",
		"-2e3":      "",
		"abc":       `usdGte: must be a number, got "abc"`,
		"NaN":       `usdGte: must be a number, got "NaN"`,
		"1e999":     `usdGte: must be a number, got "1e999"`,
		"-Inf":      `usdGte: must be a finite number, got "-Inf"`,
		"+Infinity": `usdGte: must be a finite number, got "+Infinity"`,
	} {
		_, _, err := Float(url.Values{"usdGte": {s}}, "usdGte")
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("usdGte=%s: error %q, want %q", s, got, want)
		}
	}
}

// Whatever the text, Float either refuses it naming the parameter or returns a finite number.
func FuzzFloat(f *testing.F) {
	for _, s := range []string{"1", "-0", "1e308", "1e999", "NaN", "-Inf", "0x1p-2", "1_000", " 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok, err := Float(url.Values{"x": {s}}, "x")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "x: ") {
				t.Fatalf("%q: error %q does not name the parameter", s, err)
			}
			return
		}
		if ok && (math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("%q: accepted %v", s, v)
		}
	})
}

func TestChains(t *testing.T) {
	set, err := chains.NewSet([]string{"ethereum", "base", "bitcoin"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query string
		want  []string
		err   string
	}{
		{"", nil, ""},
		{"chains=", nil, ""},
		{"chains=base,ethereum&chains=base", []string{"base", "ethereum"}, ""},
		{"chains=notachain", nil, `chains: unknown chain "notachain"`},
		{"chains=ethereum,notachain", nil, `chains: unknown chain "notachain"`},
		{"chains=ton", nil, `chains: chain "ton" is not configured on this deployment`},
		{"chains=Ethereum", nil, `chains: unknown chain "Ethereum"`},
	} {
		q, _ := url.ParseQuery(c.query)
		cs, err := Chains(q, "chains", set)
		if c.err != "" {
			if err == nil || err.Error() != c.err || !IsParamError(err) {
				t.Errorf("%q: error %v, want %q", c.query, err, c.err)
			}
			continue
		}
		var got []string
		if cs != nil {
			got = chains.Names(cs)
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %v %v, want %v", c.query, got, err, c.want)
		}
	}
}

// FuzzChains: any chains query either resolves to configured chains, each named in the query
// and each once, or is an error naming the parameter.
func FuzzChains(f *testing.F) {
	for _, s := range []string{"", "chains=ethereum", "chains=notachain", "chains=ethereum,base&chains=ethereum",
		"chains=ton", "chains=%00", "chains=,,", "chains=ethereum%2Cnotachain"} {
		f.Add(s)
	}
	set, err := chains.NewSet([]string{"ethereum", "base", "bitcoin"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		named, lerr := List(q, "chains")
		cs, err := Chains(q, "chains", set)
		if err != nil {
			if !IsParamError(err) || !strings.HasPrefix(err.Error(), "chains: ") {
				t.Fatalf("error does not name the parameter: %v", err)
			}
			return
		}
		if lerr != nil {
			t.Fatalf("List refused %q (%v) but Chains did not", raw, lerr)
		}
		if len(cs) != len(named) {
			t.Fatalf("%q: %d chains for %d names", raw, len(cs), len(named))
		}
		seen := map[string]bool{}
		for i, c := range cs {
			if !set.Has(c.Name) || seen[c.Name] || c.Name != named[i] {
				t.Fatalf("%q: chain %q out of place (names %v)", raw, c.Name, named)
			}
			seen[c.Name] = true
		}
	})
}

// TestDurationErrors: each refusal names what is wrong with the value.
func TestDurationErrors(t *testing.T) {
	for in, want := range map[string]string{
		"3661d":      `duration "3661d" must be positive and at most 3660d`,
		"100000000d": `duration "100000000d" must be positive and at most 3660d`,
		"1000w":      `duration "1000w" must be positive and at most 3660d`,
		"0d":         `duration "0d" must be a positive whole number of days or weeks, such as 7d or 2w`,
		"xd":         `duration "xd" must be a positive whole number of days or weeks, such as 7d or 2w`,
		"88000h":     `duration "88000h" must be positive and at most 3660d`,
	} {
		if _, err := Duration(in); err == nil || err.Error() != want {
			t.Errorf("Duration(%q) = %v, want %s", in, err, want)
		}
	}
	if d, err := Duration("3660d"); err != nil || d != 3660*24*time.Hour {
		t.Errorf("Duration(3660d) = %v, %v", d, err)
	}
}

// TestDurationAtMost: a route's own limit is the one its refusals state; Duration keeps 3660d.
func TestDurationAtMost(t *testing.T) {
	year := 365 * 24 * time.Hour
	for in, want := range map[string]string{
		"0h":    `duration "0h" must be positive and at most 365d`,
		"-1h":   `duration "-1h" must be positive and at most 365d`,
		"366d":  `duration "366d" must be positive and at most 365d`,
		"3661d": `duration "3661d" must be positive and at most 365d`,
		"53w":   `duration "53w" must be positive and at most 365d`,
		"0d":    `duration "0d" must be a positive whole number of days or weeks, such as 7d or 2w`,
	} {
		if _, err := DurationAtMost(in, year, "365d"); err == nil || err.Error() != want {
			t.Errorf("DurationAtMost(%q) = %v, want %s", in, err, want)
		}
	}
	if d, err := DurationAtMost("365d", year, "365d"); err != nil || d != year {
		t.Errorf("DurationAtMost(365d) = %v, %v", d, err)
	}
	if _, err := Duration("0h"); err == nil || err.Error() != `duration "0h" must be positive and at most 3660d` {
		t.Errorf("Duration(0h) = %v", err)
	}
}

// TestLastAlone: timeLast with a non-empty bound is refused as TimeWindow refuses it.
func TestLastAlone(t *testing.T) {
	for q, refused := range map[string]bool{
		"timeLast=1h&timeGte=1": true, "timeLast=1h&timeLte=1": true, "timeLast=1h": false,
		"timeGte=1&timeLte=2": false, "timeLast=1h&timeGte=": false, "timeLast=&timeGte=1": false,
	} {
		v, _ := url.ParseQuery(q)
		err := LastAlone(v)
		if got := err != nil; got != refused || (refused && err.Error() != "timeLast: cannot be combined with timeGte or timeLte") {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func TestTruncCutsAtACharacter(t *testing.T) {
	short := strings.Repeat("a", MaxQuotedBytes)
	if got := Trunc(short); got != short {
		t.Fatalf("Trunc of %d bytes = %q, want it whole", MaxQuotedBytes, got)
	}
	// ASCII up to one byte short of the bound, then a 3-byte character across it: the cut falls
	// before the character.
	long := strings.Repeat("a", MaxQuotedBytes-1) + "€" + "tail"
	want := strings.Repeat("a", MaxQuotedBytes-1) + "…"
	if got := Trunc(long); got != want || !utf8.ValidString(got) {
		t.Fatalf("Trunc = %q, want %q (valid UTF-8)", got, want)
	}
}
