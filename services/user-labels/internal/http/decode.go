package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"strings"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
)

// The body decoders below take the raw JSON value (httpx.BindJSON has already enforced the size
// limit and that it is one JSON value) and return plain inputs for app, or a 400 naming the item
// and the field.

// labelBody is a UserLabel as sent; nil means absent.
type labelBody struct {
	Name      *string `json:"name"`
	Note      *string `json:"note"`
	Address   *string `json:"address"`
	ChainType *string `json:"chainType"`
}

// decodeLabels decodes a POST /user/labels body: an array of UserLabel objects with all four
// fields present.
func decodeLabels(raw []byte) ([]app.LabelInput, error) {
	items, err := decodeArray(raw, "body: want an array of labels")
	if err != nil {
		return nil, err
	}
	out := make([]app.LabelInput, len(items))
	for i, item := range items {
		path := fmt.Sprintf("labels[%d]", i)
		var b labelBody
		if err := decodeObject(item, &b); err != nil {
			return nil, httpx.BadRequest("%s: %v", path, err)
		}
		for _, f := range []struct {
			name string
			v    *string
		}{{"name", b.Name}, {"note", b.Note}, {"address", b.Address}, {"chainType", b.ChainType}} {
			if f.v == nil {
				return nil, httpx.BadRequest("%s.%s: required", path, f.name)
			}
		}
		out[i] = app.LabelInput{Name: *b.Name, Note: *b.Note, Address: *b.Address, ChainType: *b.ChainType}
	}
	return out, nil
}

// decodeLabelUpdate decodes a PUT /user/labels/{id} body: name and note required, address and
// chainType optional.
func decodeLabelUpdate(raw []byte) (app.LabelUpdate, error) {
	var b labelBody
	if err := decodeObject(raw, &b); err != nil {
		return app.LabelUpdate{}, httpx.BadRequest("body: %v", err)
	}
	if b.Name == nil {
		return app.LabelUpdate{}, httpx.BadRequest("name: required")
	}
	if b.Note == nil {
		return app.LabelUpdate{}, httpx.BadRequest("note: required")
	}
	return app.LabelUpdate{Name: *b.Name, Note: *b.Note, Address: b.Address, ChainType: b.ChainType}, nil
}

// entityBody is a UserEntity input as sent.
type entityBody struct {
	Name      *string             `json:"name"`
	Note      *string             `json:"note"`
	Addresses map[string][]string `json:"addresses"`
	Shareable *bool               `json:"shareable"`
}

func (b entityBody) input() app.EntityBody {
	out := app.EntityBody{Addresses: b.Addresses, Shareable: b.Shareable}
	if b.Name != nil {
		out.Name = *b.Name
	}
	if b.Note != nil {
		out.Note = *b.Note
	}
	return out
}

// decodeEntities decodes a POST /user/entities body: one entity object or an array of them.
// array reports which it was (errors then carry the item index).
func decodeEntities(raw []byte) (bodies []app.EntityBody, array bool, err error) {
	switch firstByte(raw) {
	case '{':
		b, err := decodeEntity(raw)
		if err != nil {
			return nil, false, err
		}
		return []app.EntityBody{b}, false, nil
	case '[':
		items, err := decodeArray(raw, "")
		if err != nil {
			return nil, true, err
		}
		out := make([]app.EntityBody, len(items))
		for i, item := range items {
			var b entityBody
			if err := decodeObject(item, &b); err != nil {
				return nil, true, httpx.BadRequest("entities[%d]: %v", i, err)
			}
			out[i] = b.input()
		}
		return out, true, nil
	default:
		return nil, false, httpx.BadRequest("body: want an entity object or an array of entity objects")
	}
}

// decodeEntity decodes a PUT /user/entities/{id} body: one entity object.
func decodeEntity(raw []byte) (app.EntityBody, error) {
	var b entityBody
	if err := decodeObject(raw, &b); err != nil {
		return app.EntityBody{}, httpx.BadRequest("body: %v", err)
	}
	return b.input(), nil
}

// decodeAddresses decodes a PUT /user/entities/only_add/{id} body: {"addresses": {...}}.
func decodeAddresses(raw []byte) (map[string][]string, error) {
	var b struct {
		Addresses map[string][]string `json:"addresses"`
	}
	if err := decodeObject(raw, &b); err != nil {
		return nil, httpx.BadRequest("body: %v", err)
	}
	return b.Addresses, nil
}

// labelsParam reads the DELETE /user/labels ?labels= list.
func labelsParam(types app.ChainTypes, q url.Values) ([]app.AddressRef, error) {
	ids, err := params.List(q, "labels")
	if err != nil {
		return nil, httpx.BadRequest("%v", err)
	}
	return types.ParseLabelIDs("labels", ids, true)
}

// decodeArray splits a JSON array into its items. notArray is the error when raw is not an array
// ("" for a generic one).
func decodeArray(raw []byte, notArray string) ([]json.RawMessage, error) {
	if firstByte(raw) != '[' {
		if notArray == "" {
			notArray = "body: want an array"
		}
		return nil, httpx.BadRequest("%s", notArray)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, httpx.BadRequest("body: %v", err)
	}
	return items, nil
}

// decodeObject decodes one JSON object into v, refusing unknown fields, with errors worded for
// the caller (without a path; the caller adds it).
func decodeObject(raw []byte, v any) error {
	if firstByte(raw) != '{' {
		return errors.New("want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var typ *json.UnmarshalTypeError
	var syn *json.SyntaxError
	switch {
	case err == nil:
		if _, err := dec.Token(); err != io.EOF {
			return errors.New("data after the JSON object")
		}
		return nil
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Errorf("field %q must be %s, not %s", typ.Field, jsonKind(typ.Type), valueWord(typ.Value))
		}
		return fmt.Errorf("must be an object, not %s", valueWord(typ.Value))
	case errors.As(err, &syn):
		return fmt.Errorf("not valid JSON (at byte %d)", syn.Offset)
	default:
		// encoding/json words unknown fields as `json: unknown field "x"`.
		return errors.New(trimJSONPrefix(err.Error()))
	}
}

// jsonKind words what a field takes in the API's terms, never a Go type.
func jsonKind(t reflect.Type) string {
	switch t.String() {
	case "bool", "*bool":
		return "a boolean"
	case "map[string][]string":
		return "an object {chainType: [address, ...]}"
	}
	return httpx.JSONKind(t)
}

// valueWord words encoding/json's name of the value it found ("number 1.5", "bool").
func valueWord(v string) string {
	switch {
	case v == "bool":
		return "a boolean"
	case v == "array", v == "object":
		return "an " + v
	case strings.HasPrefix(v, "number"):
		return "a number"
	}
	return "a " + v
}

func trimJSONPrefix(s string) string {
	if len(s) > 6 && s[:6] == "json: " {
		return s[6:]
	}
	return s
}

func firstByte(raw []byte) byte {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}
