package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"
)

// DecodeJSON decodes exactly one JSON value from r into v. Unknown fields, trailing data, an
// empty body, invalid UTF-8 and NUL characters in strings are errors worded for the caller:
// they name the field and what was expected, never a Go type.
func DecodeJSON(r io.Reader, v any) error {
	if r == nil {
		return errors.New("request body is empty; want JSON")
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return fmt.Errorf("request body could not be read: %v", err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return errors.New("request body is empty; want JSON")
	}
	if err := CheckJSONText(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("request body has data after the JSON value")
	}
	return nil
}

// maxJSONDepth is the nesting encoding/json reads at most (its maxNestingDepth).
const maxJSONDepth = 10000

// jsonError words an encoding/json decoding error for the caller.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn) && strings.HasSuffix(syn.Error(), "exceeded max depth"):
		// Valid JSON nested past what encoding/json reads: say so, rather than point at the
		// byte where it stopped as if the text were broken.
		return fmt.Errorf("request body nests deeper than %d levels", maxJSONDepth)
	case errors.As(err, &syn):
		return fmt.Errorf("request body is not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Errorf("%s: must be %s, not %s", typ.Field, JSONKind(typ.Type), jsonValueWord(typ.Value))
		}
		return fmt.Errorf("request body must be %s, not %s", JSONKind(typ.Type), jsonValueWord(typ.Value))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("request body is truncated JSON")
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
		return fmt.Errorf("request body has an unknown field %s", f)
	}
	// Anything else encoding/json reports (an invalid number in a ",string" field, a value
	// an unmarshaler refused) is about the body's content; it is worded without Go types.
	return errors.New("request body: " + msg)
}

// JSONKind words the JSON a Go type decodes from, for error messages ("a string", "an array of
// strings", "an object"), so no error shows a Go type name.
func JSONKind(t reflect.Type) string {
	if t == nil {
		return "a JSON value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return "a JSON value"
		}
		e := JSONKind(t.Elem())
		return "an array of " + plural(e)
	case reflect.Map:
		return "an object of " + plural(JSONKind(t.Elem()))
	case reflect.Struct:
		return "an object"
	}
	return "a JSON value"
}

func plural(kind string) string {
	switch {
	case kind == "true or false":
		return "true/false values"
	case kind == "a JSON value":
		return "JSON values"
	case strings.HasPrefix(kind, "an array"):
		return "arrays" + strings.TrimPrefix(kind, "an array")
	case strings.HasPrefix(kind, "an object"):
		return "objects" + strings.TrimPrefix(kind, "an object")
	case strings.HasPrefix(kind, "an "):
		return kind[3:] + "s"
	case strings.HasPrefix(kind, "a "):
		return kind[2:] + "s"
	}
	return kind
}

// jsonValueWord words encoding/json's UnmarshalTypeError.Value ("string", "number 1.5",
// "bool", "array", "object") for the caller.
func jsonValueWord(v string) string {
	switch {
	case v == "bool":
		return "true/false"
	case v == "array", v == "object":
		return "an " + v
	case v == "number":
		return "a number"
	case strings.HasPrefix(v, "number "):
		return "the " + v
	case v == "":
		return "that value"
	}
	return "a " + v
}

// CheckJSONText checks the strings of a JSON document (keys and values) with the rule every
// caller's text follows (params.Text): valid UTF-8 and no NUL character, which encoding/json
// would otherwise turn into U+FFFD or pass to a store that refuses it. The error names the
// field. Valid input costs one pass over the bytes.
func CheckJSONText(raw []byte) error {
	bad := -1
	what := ""
	if !utf8.Valid(raw) {
		for i := 0; i < len(raw); {
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				bad, what = i, "is not valid UTF-8"
				break
			}
			i += size
		}
	}
	if i, rule := badEscape(raw); i >= 0 && (bad < 0 || i < bad) {
		bad, what = i, rule
	}
	if i := bytes.IndexByte(raw, 0); i >= 0 && (bad < 0 || i < bad) {
		bad, what = i, "must not contain a NUL character"
	}
	if bad < 0 {
		return nil
	}
	return fmt.Errorf("%s %s", jsonPathAt(raw, bad), what)
}

// badEscape returns the offset of the first \u escape in raw that names no text a store
// takes, and what is wrong with it, or -1: \u0000 (NUL), or half of a UTF-16 surrogate pair
// (\uD800-\uDFFF not as a high half followed by a low one), which encoding/json would turn into
// U+FFFD. A backslash escapes the byte after it, so "\\u0000" (an escaped backslash, then
// u0000) is not one.
func badEscape(raw []byte) (int, string) {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		c, ok := hexEscape(raw, i)
		switch {
		case !ok:
		case c == 0:
			return i, "must not contain a NUL character (\\u0000)"
		case c >= 0xDC00 && c <= 0xDFFF:
			return i, "holds an unpaired UTF-16 surrogate escape (\\u" + strings.ToUpper(string(raw[i+2:i+6])) + ")"
		case c >= 0xD800 && c <= 0xDBFF:
			if low, ok := hexEscape(raw, i+6); !ok || low < 0xDC00 || low > 0xDFFF {
				return i, "holds an unpaired UTF-16 surrogate escape (\\u" + strings.ToUpper(string(raw[i+2:i+6])) + ")"
			}
			i += 6 // the pair's low half is checked with it
		}
		i++ // skip the escaped byte
	}
	return -1, ""
}

// hexEscape reads the \uXXXX escape at raw[i] (a backslash), if it is one.
func hexEscape(raw []byte, i int) (rune, bool) {
	if i+5 >= len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return 0, false
	}
	var c rune
	for _, h := range raw[i+2 : i+6] {
		switch {
		case h >= '0' && h <= '9':
			c = c<<4 | rune(h-'0')
		case h >= 'a' && h <= 'f':
			c = c<<4 | rune(h-'a'+10)
		case h >= 'A' && h <= 'F':
			c = c<<4 | rune(h-'A'+10)
		default:
			return 0, false
		}
	}
	return c, true
}

// jsonPathAt names the JSON value (or key) holding byte offset off: "request body" for the
// root, else "field name", "addresses.evm[2]", "body[3].name". It follows the document's structure
// by tokens up to off, so it is only used once something is wrong.
func jsonPathAt(raw []byte, off int) string {
	type level struct {
		array bool
		index int
		key   string
		inKey bool // the next string token of an object is a key
	}
	var stack []level
	name := func() string {
		var b strings.Builder
		for _, l := range stack {
			if l.array {
				fmt.Fprintf(&b, "[%d]", l.index)
			} else if l.key != "" {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(l.key)
			}
		}
		if b.Len() == 0 {
			return "request body"
		}
		if len(stack) > 0 && stack[0].array {
			return "body" + b.String() // body[2].name
		}
		return b.String()
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return name()
		}
		end := int(dec.InputOffset())
		top := len(stack) - 1
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, level{array: t == '[', index: -1, inKey: t == '{'})
				if t == '[' {
					stack[len(stack)-1].index = 0
				}
				continue
			default:
				stack = stack[:top]
				top--
			}
		case string:
			if top >= 0 && !stack[top].array && stack[top].inKey {
				stack[top].key, stack[top].inKey = t, false
				if end > off {
					return name() + " (a field name)"
				}
				continue
			}
		}
		if end > off {
			return name()
		}
		// A value ended: the next one is the array's next element or the object's next key.
		if top >= 0 {
			if stack[top].array {
				stack[top].index++
			} else {
				stack[top].inKey = true
			}
		}
	}
}
