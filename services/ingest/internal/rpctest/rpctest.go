// Package rpctest serves a scripted Ethereum JSON-RPC endpoint over httptest for tests and
// benchmarks: single and batch requests, answers decided by a Go function.
package rpctest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Error is a JSON-RPC error answer.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Revert is the error nodes answer for a reverted eth_call.
var Revert = &Error{Code: 3, Message: "execution reverted"}

// MethodNotFound is the error for an unknown method.
func MethodNotFound(m string) *Error {
	return &Error{Code: -32601, Message: "the method " + m + " does not exist/is not available"}
}

// Handler answers one call: a result (marshalled to JSON unless it is json.RawMessage) or an
// error.
type Handler func(method string, params []json.RawMessage) (any, *Error)

// Server is a running scripted endpoint.
type Server struct {
	URL      string
	Requests atomic.Int64 // HTTP requests served
	Calls    atomic.Int64 // JSON-RPC calls answered
}

type request struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Start serves h until the test ends.
func Start(t testing.TB, h Handler) *Server {
	t.Helper()
	s := &Server{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = bytes.TrimSpace(body)
		w.Header().Set("Content-Type", "application/json")
		if len(body) > 0 && body[0] == '[' {
			var reqs []request
			if err := json.Unmarshal(body, &reqs); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			out := make([]response, len(reqs))
			for i, rq := range reqs {
				out[i] = s.answer(h, rq)
			}
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		var rq request
		if err := json.Unmarshal(body, &rq); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(s.answer(h, rq))
	}))
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

func (s *Server) answer(h Handler, rq request) response {
	s.Calls.Add(1)
	res, rerr := h(rq.Method, rq.Params)
	out := response{JSONRPC: "2.0", ID: rq.ID, Error: rerr}
	if rerr == nil {
		if raw, ok := res.(json.RawMessage); ok {
			out.Result = raw
		} else {
			b, err := json.Marshal(res)
			if err != nil {
				out.Error = &Error{Code: -32603, Message: err.Error()}
			} else {
				out.Result = b
			}
		}
	}
	return out
}

// String decodes a string parameter ("" when it is not one).
func String(p json.RawMessage) string {
	var s string
	_ = json.Unmarshal(p, &s)
	return s
}
