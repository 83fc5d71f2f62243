package filter

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// fieldNames are the fields of a filter, in the order an unknown field's error lists them.
var fieldNames = []string{"from", "to", "base", "flow", "counterparties", "tokens", "chains", "usdGte", "usdLte", "valueGte", "valueLte"}

// Decode reads a filter's JSON (a subscribe message's filters, a v2 stream's body). Every error
// is an *Error naming the field and what it wants, in the words of JSON, never of Go types
// (encoding/json's own messages name them).
func Decode(b []byte) (Raw, error) {
	var r Raw
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return r, errf("filters", "want a JSON object (a TransferFilter), not %s", kindOf(b))
	}
	d := json.NewDecoder(bytes.NewReader(b))
	var m map[string]json.RawMessage
	if err := d.Decode(&m); err != nil {
		return r, errf("filters", "not valid JSON")
	}
	if d.More() {
		return r, errf("filters", "trailing data after the JSON object")
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names) // the same input names the same field first
	for _, k := range names {
		if err := r.set(k, m[k]); err != nil {
			return Raw{}, err
		}
	}
	return r, nil
}

// set decodes one field of a filter's JSON into r.
func (r *Raw) set(name string, v json.RawMessage) error {
	list := map[string]*List{"from": &r.From, "to": &r.To, "chains": &r.Chains, "tokens": &r.Tokens, "base": &r.Base, "counterparties": &r.Counterparties}
	num := map[string]**Number{"usdGte": &r.USDGte, "usdLte": &r.USDLte, "valueGte": &r.ValueGte, "valueLte": &r.ValueLte}
	if l, ok := list[name]; ok {
		if l.UnmarshalJSON(v) != nil {
			k := kindOf(v)
			if k == "an array" {
				k = "an array holding something other than strings"
			}
			return errf(name, "want an array of strings or a comma-separated string, not %s", k)
		}
		return nil
	}
	if p, ok := num[name]; ok {
		if string(bytes.TrimSpace(v)) == "null" {
			*p = nil
			return nil
		}
		if !numeric(v) {
			return errf(name, "want a number or a decimal string, not %s", kindOf(v))
		}
		var n Number
		if err := n.UnmarshalJSON(v); err != nil {
			return errf(name, "%v", err)
		}
		*p = &n
		return nil
	}
	if name == "flow" {
		if string(bytes.TrimSpace(v)) == "null" {
			return nil
		}
		if json.Unmarshal(v, &r.Flow) != nil {
			return errf("flow", "want a string (in, out, self or all), not %s", kindOf(v))
		}
		return nil
	}
	if name == "" {
		return errf("filters", "a field with an empty name; a filter has %s", strings.Join(fieldNames, ", "))
	}
	if len(name) > 64 {
		name = name[:64] + "..."
	}
	return errf(name, "unknown field; a filter has %s", strings.Join(fieldNames, ", "))
}

// numeric reports whether v is a JSON number or string (Number's parse accepts more, such as a
// bare true read as text, which a filter does not).
func numeric(v json.RawMessage) bool {
	k := kindOf(v)
	return k == "a number" || k == "a string"
}

// kindOf words the kind of a JSON value for an error message.
func kindOf(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch c := v[0]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	}
	return "not JSON"
}
