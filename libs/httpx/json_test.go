package httpx

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// Decoding errors name the field and what was expected in the caller's words: no Go type,
// package or struct name.
func TestDecodeJSONErrorsInUserWords(t *testing.T) {
	type ref struct {
		ChainType string `json:"chainType"`
		Address   string `json:"address"`
	}
	type body struct {
		Addresses []ref               `json:"addresses"`
		Names     []string            `json:"names"`
		Limit     int                 `json:"limit"`
		Ratio     float64             `json:"ratio"`
		Shareable *bool               `json:"shareable"`
		ByChain   map[string][]string `json:"byChain"`
	}
	cases := []struct{ in, want string }{
		{`{"addresses":"0x1"}`, `addresses: must be an array of objects, not a string`},
		{`{"addresses":[{"address":5}]}`, `addresses.address: must be a string, not a number`},
		{`{"names":[1]}`, `names: must be a string, not a number`},
		{`{"names":{}}`, `names: must be an array of strings, not an object`},
		{`{"limit":"10"}`, `limit: must be an integer, not a string`},
		{`{"limit":1.5}`, `limit: must be an integer, not the number 1.5`},
		{`{"ratio":true}`, `ratio: must be a number, not true/false`},
		{`{"shareable":"yes"}`, `shareable: must be true or false, not a string`},
		{`{"byChain":[]}`, `byChain: must be an object of arrays of strings, not an array`},
		{`[]`, `request body must be an object, not an array`},
		{`{"nope":1}`, `request body has an unknown field "nope"`},
		{`{"names":["a\u0000"]}`, `names[0] must not contain a NUL character (\u0000)`},
		{"{\"names\":[\"ok\",\"\xff\"]}", `names[1] is not valid UTF-8`},
		{"{\"na\xffmes\":[]}", `names (a field name) is not valid UTF-8`},
		{`{"names":["a\\u0000"]}`, ``}, // an escaped backslash, then the text u0000
	}
	for _, c := range cases {
		var v body
		err := DecodeJSON(strings.NewReader(c.in), &v)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if strings.Contains(c.in, "na\xffmes") && err != nil {
			// The key decodes as "na\uFFFDmes"; only the rule matters here.
			if !strings.HasSuffix(got, "(a field name) is not valid UTF-8") {
				t.Errorf("%q: %q", c.in, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("DecodeJSON(%s):\n got %q\nwant %q", c.in, got, c.want)
		}
		for _, goWord := range []string{"Go ", "struct", "[]", "map[", "httpx.", "int64", "float64", "*bool"} {
			if strings.Contains(got, goWord) {
				t.Errorf("DecodeJSON(%s) names a Go type: %q", c.in, got)
			}
		}
	}
}

// CheckJSONText refuses exactly the documents holding invalid UTF-8 or a NUL character (raw or
// escaped), and never panics while naming the field.
func FuzzCheckJSONText(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `["\u0000"]`, `{"a":["x","\\u0000"]}`, "[\"\xff\"]", `{"a":{"b":[1,"\u0000"]}}`, `"`, ``, `{"a":"\ud800x"}`, `["\ud83d\ude00"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		err := CheckJSONText(raw)
		if !utf8.Valid(raw) || bytes.IndexByte(raw, 0) >= 0 {
			if err == nil {
				t.Fatalf("accepted %q", raw)
			}
			return
		}
		if !json.Valid(raw) {
			return
		}
		var v any
		_ = json.Unmarshal(raw, &v)
		// A U+FFFD the document did not hold (literally or as \uFFFD) is a surrogate escape
		// encoding/json could not pair.
		replaced := countRune(v, 0xFFFD) > strings.Count(string(raw), "\uFFFD")+fffdEscapes(raw)
		if (err == nil) == (holdsNUL(v) || replaced) {
			t.Fatalf("CheckJSONText(%q) = %v, NUL in the decoded value: %v, a surrogate replaced: %v", raw, err, holdsNUL(v), replaced)
		}
	})
}

// TestCheckJSONTextSurrogates: half of a surrogate pair is refused, naming the field; a pair is
// text.
func TestCheckJSONTextSurrogates(t *testing.T) {
	for raw, want := range map[string]string{
		`[{"name":"a\ud800b"}]`:     `body[0].name holds an unpaired UTF-16 surrogate escape (\uD800)`,
		`{"a":"\udc00"}`:            `a holds an unpaired UTF-16 surrogate escape (\uDC00)`,
		`{"a":"\ud800\u0041"}`:      `a holds an unpaired UTF-16 surrogate escape (\uD800)`,
		`{"a":"\ud83d\ude00 ok"}`:   ``,
		`{"a":"\\ud800"}`:           ``,
		`{"a":"\uFFFD and \ufffd"}`: ``,
		`{"a":"\ud800"}`:            `a holds an unpaired UTF-16 surrogate escape (\uD800)`,
	} {
		got := ""
		if err := CheckJSONText([]byte(raw)); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("CheckJSONText(%s) = %q, want %q", raw, got, want)
		}
	}
}

// fffdEscapes counts the \uFFFD escapes of raw in lower or mixed case (a backslash escapes the
// byte after it); strings.Count above counts the upper-case ones.
func fffdEscapes(raw []byte) int {
	n := 0
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if c, ok := hexEscape(raw, i); ok && c == 0xFFFD {
			n++
		}
		i++
	}
	return n
}

func countRune(v any, r rune) int {
	n := 0
	switch x := v.(type) {
	case string:
		n += strings.Count(x, string(r))
	case []any:
		for _, e := range x {
			n += countRune(e, r)
		}
	case map[string]any:
		for k, e := range x {
			n += strings.Count(k, string(r)) + countRune(e, r)
		}
	}
	return n
}

func holdsNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.ContainsRune(x, 0)
	case []any:
		for _, e := range x {
			if holdsNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if strings.ContainsRune(k, 0) || holdsNUL(e) {
				return true
			}
		}
	}
	return false
}
