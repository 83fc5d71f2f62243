package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
)

// DecodeJSON decodes exactly one JSON value from r into v. Unknown fields, trailing data and an
// empty body are errors worded for the caller.
func DecodeJSON(r io.Reader, v any) error {
	if r == nil {
		return errors.New("request body is empty; want JSON")
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &tooBig):
			return err
		case errors.Is(err, io.EOF):
			return errors.New("request body is empty; want JSON")
		case errors.As(err, &syn):
			return fmt.Errorf("request body is not valid JSON (at byte %d)", syn.Offset)
		case errors.As(err, &typ):
			if typ.Field != "" {
				return fmt.Errorf("field %q must be %s, not %s", typ.Field, jsonKind(typ.Type), typ.Value)
			}
			return fmt.Errorf("request body must be %s, not %s", jsonKind(typ.Type), typ.Value)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return errors.New("request body is truncated JSON")
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return errors.New("request body has an unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field "))
		default:
			return fmt.Errorf("request body: %s", strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	if dec.More() {
		return errors.New("request body has data after the JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return errors.New("request body has data after the JSON value")
	}
	return nil
}

// jsonKind names what a Go type holds in JSON terms, so that a 400 never names an internal type
// ("app.LabelInput", "[]string").
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a string"
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	default:
		return "another JSON value"
	}
}
