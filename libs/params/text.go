package params

import (
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"
)

// Text checks one piece of caller text (a query value, a path segment, a JSON string) against
// what every store accepts: valid UTF-8 without NUL characters. PostgreSQL refuses both in text
// columns, and encoding/json would silently turn invalid UTF-8 into U+FFFD, so they are refused
// here, at the edge of each service, with an error naming the parameter.
func Text(name, value string) error {
	for i := 0; i < len(value); {
		r, size := utf8.DecodeRuneInString(value[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return Errorf(name, "is not valid UTF-8 (byte %d)", i)
		case r == 0:
			return Errorf(name, "must not contain a NUL character (byte %d)", i)
		}
		i += size
	}
	return nil
}

// Query checks every name and value of a query string with Text, in name order so the error is
// the same for the same query.
func Query(q url.Values) error {
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if err := Text("query parameter name", k); err != nil {
			return err
		}
		for _, v := range q[k] {
			if err := Text(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// RawQuery parses a request's raw query string as url.ParseQuery does, but refuses it whole
// where url.ParseQuery would drop a pair (a malformed percent-escape, a ";") or every pair (more
// parts than its limit, the urlmaxqueryparams setting) instead of reading the rest: a dropped
// filter widens the answer, so the caller gets a 400 naming the parameter rather than an answer
// to another question. The values are then checked with Query.
func RawQuery(raw string) (url.Values, error) {
	q, err := url.ParseQuery(raw)
	if err == nil {
		return q, Query(q)
	}
	return nil, rawQueryError(raw, err)
}

// rawQueryError names the first pair of raw that url.ParseQuery refused, or the query string
// when no pair is at fault (too many parts).
func rawQueryError(raw string, err error) error {
	for pair := range strings.SplitSeq(raw, "&") {
		key, value, _ := strings.Cut(pair, "=")
		name, kerr := url.QueryUnescape(key)
		switch {
		case kerr != nil:
			return Errorf("query parameter name", "%q holds an invalid percent-escape", key)
		case strings.Contains(pair, ";"):
			return Errorf(name, "holds a semicolon: query parameters are separated by ampersands only, and a semicolon in a value is written %%3B")
		}
		if _, verr := url.QueryUnescape(value); verr != nil {
			return Errorf(name, "holds an invalid percent-escape (a literal %% is written %%25)")
		}
	}
	return Errorf("query string", "%v", err)
}
