package params

import (
	"net/url"
	"sort"
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
