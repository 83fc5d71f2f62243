// Package params parses the query parameters the public API shares: comma-separated or repeated
// multi-values, the time window (timeLast | timeGte/timeLte), durations such as "7d", bounded
// integers and booleans. Every error names the parameter and the rule, ready to be a 400.
package params

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits on user input.
const (
	MaxListItems  = 1000 // values in one multi-value parameter
	MaxValueBytes = 8192 // bytes of one parameter value
)

// Error is a bad parameter. Its message is meant for the caller.
type Error struct {
	Param string
	Rule  string
}

func (e *Error) Error() string { return e.Param + ": " + e.Rule }

// Errorf returns an *Error for param.
func Errorf(param, format string, args ...any) error {
	return &Error{Param: param, Rule: fmt.Sprintf(format, args...)}
}

// IsParamError reports whether err is a bad-parameter error.
func IsParamError(err error) bool {
	var pe *Error
	return errors.As(err, &pe)
}

// List returns the values of a multi-value parameter: each occurrence split on commas, trimmed,
// empty items dropped, duplicates removed, first-seen order kept.
func List(q url.Values, name string) ([]string, error) {
	raw := q[name]
	if len(raw) == 0 {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, r := range raw {
		if len(r) > MaxValueBytes {
			return nil, Errorf(name, "value longer than %d bytes", MaxValueBytes)
		}
		for _, v := range strings.Split(r, ",") {
			v = strings.TrimSpace(v)
			if v == "" || seen[v] {
				continue
			}
			if len(out) == MaxListItems {
				return nil, Errorf(name, "more than %d values", MaxListItems)
			}
			seen[v] = true
			out = append(out, v)
		}
	}
	return out, nil
}

// One returns a single-valued parameter ("" when absent). Repeating it is an error.
func One(q url.Values, name string) (string, error) {
	vs := q[name]
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", Errorf(name, "given %d times; give it once", len(vs))
	case len(vs[0]) > MaxValueBytes:
		return "", Errorf(name, "value longer than %d bytes", MaxValueBytes)
	}
	return strings.TrimSpace(vs[0]), nil
}

// Int parses an integer parameter within [min, max], def when absent.
func Int(q url.Values, name string, def, min, max int) (int, error) {
	s, err := One(q, name)
	if err != nil || s == "" {
		return def, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, Errorf(name, "must be an integer, got %q", Trunc(s))
	}
	if n < min || n > max {
		return 0, Errorf(name, "must be between %d and %d, got %d", min, max, n)
	}
	return n, nil
}

// Float parses an optional number; ok is false when absent.
func Float(q url.Values, name string) (v float64, ok bool, err error) {
	s, err := One(q, name)
	if err != nil || s == "" {
		return 0, false, err
	}
	v, err = strconv.ParseFloat(s, 64)
	if err != nil || v != v { // NaN
		return 0, false, Errorf(name, "must be a number, got %q", Trunc(s))
	}
	if math.IsInf(v, 0) { // ParseFloat takes "Inf" and "-Infinity"; a bound needs a number
		return 0, false, Errorf(name, "must be a finite number, got %q", Trunc(s))
	}
	return v, true, nil
}

// Bool parses a boolean parameter ("true"/"false"/"1"/"0"), def when absent.
func Bool(q url.Values, name string, def bool) (bool, error) {
	s, err := One(q, name)
	if err != nil || s == "" {
		return def, err
	}
	switch strings.ToLower(s) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, Errorf(name, "must be true or false, got %q", Trunc(s))
}

// Enum returns the parameter if it is one of allowed, def when absent.
func Enum(q url.Values, name, def string, allowed ...string) (string, error) {
	s, err := One(q, name)
	if err != nil || s == "" {
		return def, err
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", Errorf(name, "must be one of %s, got %q", strings.Join(allowed, ", "), Trunc(s))
}

// MaxDuration is the longest duration Duration accepts (3660d, 10 years).
const MaxDuration = 3660 * 24 * time.Hour

// Duration parses "<n><unit>" with unit s, m, h, d (24h) or w (7d), e.g. "1h", "24h", "7d",
// "30d"; Go durations such as "90m" or "1h30m" are accepted too. It must be positive and at
// most 10 years.
func Duration(s string) (time.Duration, error) {
	return DurationAtMost(s, MaxDuration, "3660d")
}

// DurationAtMost parses s as Duration does, for a route whose own limit is limit (at most
// MaxDuration), named limitText ("365d") in the refusal of a value that is not positive or over
// it, so the message states the limit the route applies.
func DurationAtMost(s string, limit time.Duration, limitText string) (time.Duration, error) {
	limit = min(limit, MaxDuration)
	if s == "" {
		return 0, errors.New("empty duration")
	}
	if len(s) > 32 {
		return 0, fmt.Errorf("duration %q is too long", Trunc(s))
	}
	var d time.Duration
	unit := s[len(s)-1]
	if unit == 'd' || unit == 'w' {
		n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("duration %q must be a positive whole number of days or weeks, such as 7d or 2w", Trunc(s))
		}
		if n > int64(MaxDuration/(24*time.Hour)) { // before multiplying, which could overflow
			return 0, fmt.Errorf("duration %q must be positive and at most %s", Trunc(s), limitText)
		}
		d = time.Duration(n) * 24 * time.Hour
		if unit == 'w' {
			d *= 7
		}
	} else {
		var err error
		d, err = time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("duration %q must look like 1h, 24h, 7d or 30d", Trunc(s))
		}
	}
	if d <= 0 || d > limit {
		return 0, fmt.Errorf("duration %q must be positive and at most %s", Trunc(s), limitText)
	}
	return d, nil
}

// Time parses Unix milliseconds or RFC 3339.
func Time(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("empty time")
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 || ms > 253402300799999 { // year 9999
			return time.Time{}, fmt.Errorf("time %d is out of range (0 to 253402300799999 Unix milliseconds)", ms)
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q must be Unix milliseconds or RFC 3339", Trunc(s))
	}
	// The same range as milliseconds: before 1970 nothing is stored, and year 1 is Go's zero
	// time, which a window would read as "no bound".
	if t.Before(time.Unix(0, 0)) || t.After(maxTime) {
		return time.Time{}, fmt.Errorf("time %q is out of range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z)", Trunc(s))
	}
	return t.UTC(), nil
}

var maxTime = time.UnixMilli(253402300799999)

// Window is a time range; a zero bound is open.
type Window struct {
	From time.Time // inclusive
	To   time.Time // inclusive
}

// IsZero reports whether the window is unbounded on both sides.
func (w Window) IsZero() bool { return w.From.IsZero() && w.To.IsZero() }

// LastAlone refuses timeLast given with timeGte or timeLte (API.md, Conventions), with the
// message TimeWindow gives, for routes that read timeLast without TimeWindow.
func LastAlone(q url.Values) error {
	given := func(name string) bool {
		return slices.ContainsFunc(q[name], func(v string) bool { return strings.TrimSpace(v) != "" })
	}
	if given("timeLast") && (given("timeGte") || given("timeLte")) {
		return Errorf("timeLast", "cannot be combined with timeGte or timeLte")
	}
	return nil
}

// TimeWindow reads timeLast or timeGte/timeLte relative to now. Giving timeLast with either
// bound, a bad value, or timeGte after timeLte is an error naming the parameter.
func TimeWindow(q url.Values, now time.Time) (Window, error) {
	last, err := One(q, "timeLast")
	if err != nil {
		return Window{}, err
	}
	gte, err := One(q, "timeGte")
	if err != nil {
		return Window{}, err
	}
	lte, err := One(q, "timeLte")
	if err != nil {
		return Window{}, err
	}
	if last != "" {
		if err := LastAlone(q); err != nil {
			return Window{}, err
		}
		d, err := Duration(last)
		if err != nil {
			return Window{}, Errorf("timeLast", "%v", err)
		}
		return Window{From: now.Add(-d).UTC(), To: now.UTC()}, nil
	}
	var w Window
	if gte != "" {
		if w.From, err = Time(gte); err != nil {
			return Window{}, Errorf("timeGte", "%v", err)
		}
	}
	if lte != "" {
		if w.To, err = Time(lte); err != nil {
			return Window{}, Errorf("timeLte", "%v", err)
		}
	}
	if !w.From.IsZero() && !w.To.IsZero() && w.From.After(w.To) {
		return Window{}, Errorf("timeGte", "must not be after timeLte")
	}
	return w, nil
}

// FloatRange reads a <name>Gte/<name>Lte pair (e.g. usdGte, usdLte); an inverted range is an
// error.
func FloatRange(q url.Values, gteName, lteName string) (gte, lte *float64, err error) {
	g, gok, err := Float(q, gteName)
	if err != nil {
		return nil, nil, err
	}
	l, lok, err := Float(q, lteName)
	if err != nil {
		return nil, nil, err
	}
	if gok {
		gte = &g
	}
	if lok {
		lte = &l
	}
	if gok && lok && g > l {
		return nil, nil, Errorf(gteName, "must not be greater than %s", lteName)
	}
	return gte, lte, nil
}

// MaxQuotedBytes bounds a caller's value quoted back in an error message.
const MaxQuotedBytes = 128

// Trunc shortens a caller's value quoted back in an error message to its first MaxQuotedBytes
// bytes, cut at a character's start so the message stays valid UTF-8, and marks the cut with
// "…". Every service quotes through it, so a caller sees the same bound everywhere.
func Trunc(s string) string {
	if len(s) <= MaxQuotedBytes {
		return s
	}
	n := MaxQuotedBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// DropUnknown applies the parameter policy every service shares: a query parameter the route
// does not take is ignored, never refused, as the public API this project mirrors ignores it,
// so clients written for that API (which send parameters a route may not read, cache busters,
// parameters of other versions) keep working unchanged. It deletes from q every parameter not
// in allowed, so no parser can read an ignored one, and returns their names, sorted. The size
// of the query as a whole stays bounded for every parameter, known or not (Query, applied to
// every request by libs/httpx NewEngine and by the edge).
func DropUnknown(q url.Values, allowed ...string) []string {
	var dropped []string
	for k := range q {
		if !slices.Contains(allowed, k) {
			dropped = append(dropped, k)
			delete(q, k)
		}
	}
	slices.Sort(dropped)
	return dropped
}
