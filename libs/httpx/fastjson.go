package httpx

import (
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"
	gojson "github.com/goccy/go-json"
)

// Internal answers (our own services talking to each other) can be large — a lookup of 10,000
// addresses, a page of transfers — and encoding/json's reflection and map-key sorting dominate
// their cost. They use goccy/go-json instead: trusted input, no key order promised. Caller
// input keeps the strict encoding/json decoder (DecodeJSON) with its worded errors.

// maxAnswerBytes bounds an internal answer read into memory.
const maxAnswerBytes = 256 << 20

// decodeAnswer decodes an internal answer from r into v.
func decodeAnswer(r io.Reader, v any) error {
	raw, err := io.ReadAll(io.LimitReader(r, maxAnswerBytes+1))
	if err != nil {
		return err
	}
	if len(raw) > maxAnswerBytes {
		return fmt.Errorf("answer over %d bytes", maxAnswerBytes)
	}
	return UnmarshalFast(raw, v)
}

// UnmarshalFast decodes JSON from a source that is not a caller (our services, a chain node)
// with goccy/go-json. That decoder indexes past the end of some malformed documents (found by
// ingest's FuzzParseBlock); the out-of-range panic is returned as an error. (Validating with
// encoding/json first instead halves the decoding throughput.)
func UnmarshalFast(raw []byte, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed JSON (%v)", p)
		}
	}()
	return gojson.Unmarshal(raw, v)
}

// FastJSON writes v as a JSON answer with goccy/go-json, map keys in no particular order. For
// large answers of internal routes.
func FastJSON(c *gin.Context, status int, v any) {
	b, err := gojson.MarshalWithOption(v, gojson.UnorderedMap())
	if err != nil {
		Error(c, http.StatusInternalServerError, "encode answer")
		return
	}
	c.Data(status, "application/json; charset=utf-8", b)
}
