package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
				return fmt.Errorf("field %q must be %s, not %s", typ.Field, typ.Type, typ.Value)
			}
			return fmt.Errorf("request body must be %s, not %s", typ.Type, typ.Value)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return errors.New("request body is truncated JSON")
		default:
			return fmt.Errorf("request body: %s", err.Error())
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
