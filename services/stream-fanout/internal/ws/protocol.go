// Package ws is the stream's WebSocket side: the message protocol of API.md (subscribe,
// unsubscribe, reconnect; ack, transfer, error), one connection's send queue and writer, the
// sessions it serves, quotas and metering, and the hub that ties connections to the matching
// engine and to Redis.
package ws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
)

// Error codes of API.md.
const (
	CodeInvalidPayload  = "INVALID_PAYLOAD"
	CodeInvalidFilter   = "INVALID_FILTER"
	CodeFilterNotFound  = "FILTER_NOT_FOUND"
	CodeNoSession       = "NO_SESSION"
	CodeTierRateLimited = "TIER_RATE_LIMITED"
	CodeInternal        = "INTERNAL_ERROR"
	// CodeSessionLimit refuses a subscribe that would make a session over the key's cap of live
	// sessions and v2 streams; CodeRateLimited a message over the connection's message limit.
	// Neither is in API.md's list: both refuse what the list's codes do not name.
	CodeSessionLimit = "SESSION_LIMIT"
	CodeRateLimited  = "RATE_LIMITED"
)

// Message types.
const (
	TypeSubscribe   = "subscribe"
	TypeUnsubscribe = "unsubscribe"
	TypeReconnect   = "reconnect"
	TypeAck         = "ack"
	TypeTransfer    = "transfer"
	TypeError       = "error"
)

// MaxMessageID is the longest message id a client may send.
const MaxMessageID = 128

// Envelope is every message: {"type", "id", "payload"}.
type Envelope struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Request is a decoded client message.
type Request struct {
	Type      string
	ID        string
	Filters   filter.Raw // subscribe
	FilterID  string     // unsubscribe
	SessionID string     // reconnect
}

// ProtocolError is a client message refused with code.
type ProtocolError struct {
	Code, Message string
}

func (e *ProtocolError) Error() string { return e.Code + ": " + e.Message }

func perr(code, format string, args ...any) *ProtocolError {
	return &ProtocolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

func strict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// Decode parses a client message. The id is returned even when the rest is refused, so the
// error can name the message it answers.
func Decode(b []byte) (Request, error) {
	env, err := decodeEnvelope(b)
	if err != nil {
		return Request{}, err
	}
	r := Request{Type: env.Type, ID: env.ID}
	if len(env.ID) > MaxMessageID {
		r.ID = ""
		return r, perr(CodeInvalidPayload, "id: longer than %d characters", MaxMessageID)
	}
	if env.ID == "" {
		return r, perr(CodeInvalidPayload, "id: required")
	}
	if len(env.Payload) == 0 || string(env.Payload) == "null" {
		return r, perr(CodeInvalidPayload, "payload: required")
	}
	switch env.Type {
	case TypeSubscribe:
		var p struct {
			Filters *json.RawMessage `json:"filters"`
		}
		if err := strict(env.Payload, &p); err != nil || p.Filters == nil {
			return r, perr(CodeInvalidPayload, "payload: want {\"filters\": {...}}")
		}
		f, err := filter.Decode(*p.Filters)
		if err != nil {
			return r, perr(CodeInvalidFilter, "%v", err)
		}
		r.Filters = f
	case TypeUnsubscribe:
		var p struct {
			FilterID string `json:"filterId"`
		}
		if err := strict(env.Payload, &p); err != nil || p.FilterID == "" || len(p.FilterID) > 64 {
			return r, perr(CodeInvalidPayload, "payload: want {\"filterId\": \"<id from the subscribe ack>\"}")
		}
		r.FilterID = p.FilterID
	case TypeReconnect:
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if err := strict(env.Payload, &p); err != nil || p.SessionID == "" || len(p.SessionID) > 64 {
			return r, perr(CodeInvalidPayload, "payload: want {\"sessionId\": \"<id from an ack>\"}")
		}
		r.SessionID = p.SessionID
	case "":
		return r, perr(CodeInvalidPayload, "type: required (subscribe, unsubscribe or reconnect)")
	default:
		return r, perr(CodeInvalidPayload, "type: %q is not subscribe, unsubscribe or reconnect", short(env.Type))
	}
	return r, nil
}

// decodeEnvelope reads a message's envelope; its errors name the field and the JSON it wants,
// not encoding/json's Go types.
func decodeEnvelope(b []byte) (Envelope, error) {
	var env Envelope
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] != '{' && !json.Valid(t) {
		// Its first byte says nothing of what it is (`not json` starts as null would).
		return env, notJSON()
	}
	if len(t) == 0 || t[0] != '{' {
		return env, perr(CodeInvalidPayload, "message: want a JSON object {\"type\", \"id\", \"payload\"}, not %s", jsonKind(t))
	}
	err := json.Unmarshal(b, &env)
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return env, nil
	case errors.As(err, &typ) && typ.Field != "":
		return Envelope{}, perr(CodeInvalidPayload, "%s: want a string, not %s", typ.Field, jsonWord(typ.Value))
	default:
		return Envelope{}, notJSON()
	}
}

// notJSON refuses a message that is not valid JSON.
func notJSON() *ProtocolError {
	return perr(CodeInvalidPayload, "message: not valid JSON; want a JSON object {\"type\", \"id\", \"payload\"}")
}

// jsonKind words the kind of the JSON value b starts with.
func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "an empty message"
	}
	switch b[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if b[0] == '-' || b[0] >= '0' && b[0] <= '9' {
		return "a number"
	}
	return "text that is not JSON"
}

// jsonWord words the Value of a json.UnmarshalTypeError ("array", "number 5", "bool").
func jsonWord(v string) string {
	switch {
	case v == "array" || v == "object":
		return "an " + v
	case v == "bool":
		return "a boolean"
	case strings.HasPrefix(v, "number"):
		return "a number"
	}
	return v
}

func short(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

// Ack is the payload of an ack.
type Ack struct {
	MessageID string `json:"messageId"`
	Success   bool   `json:"success"`
	Message   string `json:"message"`
	Data      any    `json:"data,omitempty"`
}

// ErrorPayload is the payload of an error.
type ErrorPayload struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	MessageID string `json:"messageId,omitempty"`
	LimitType string `json:"limitType,omitempty"`
	ResetIn   *int64 `json:"resetIn,omitempty"`
}

func encode(typ string, payload any) []byte {
	b, _ := json.Marshal(struct {
		Type    string `json:"type"`
		Payload any    `json:"payload"`
	}{typ, payload})
	return b
}

// appendTransfer appends a transfer message for alertID with the rendered transfer JSON.
func appendTransfer(dst []byte, alertID string, transfer []byte) []byte {
	dst = append(dst, transferHead...)
	dst = strconv.AppendQuote(dst, alertID)
	dst = append(dst, transferMid...)
	dst = append(dst, transfer...)
	return append(dst, transferTail...)
}
