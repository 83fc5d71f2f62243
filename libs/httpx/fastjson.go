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
// with goccy/go-json. That decoder reads past the end of some malformed documents (found by
// ingest's FuzzParseBlock): an escape in an object key at the very end moves its cursor past
// the terminator it relies on, through unsafe pointer arithmetic that no bounds check stops
// (goccy/go-json issues 575 and 577, unfixed in the version pinned). The document is decoded
// with trailing whitespace (still the same JSON) so such a cursor stays inside the buffer, and
// an out-of-range panic left is returned as an error. (Validating with encoding/json first
// instead halves the decoding throughput; the copy costs what go-json's own copy does.)
func UnmarshalFast(raw []byte, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed JSON (%v)", p)
		}
	}()
	return gojson.Unmarshal(append(raw[:len(raw):len(raw)], jsonPadding...), v)
}

// jsonPadding is the whitespace UnmarshalFast decodes a document with: more than the decoder's
// cursor skips past a key's escape.
var jsonPadding = []byte("    ")

// Answer writes v, a value without maps, as a JSON answer with goccy/go-json: the same document
// encoding/json (gin's c.JSON) writes, at less cost (TestAnswerMatchesEncodingJSON,
// FuzzAnswer). Public answers that are pages of rows use it: encoding is a large share of a
// page turn's CPU. Not for maps: go-json orders their
// keys by their encoded form (a key with '<', or a prefix of another followed by a space, sorts
// elsewhere).
func Answer(c *gin.Context, status int, v any) {
	b, err := gojson.Marshal(v)
	if err != nil {
		Error(c, http.StatusInternalServerError, "encode answer")
		return
	}
	c.Data(status, "application/json; charset=utf-8", asEncodingJSON(b))
}

// asEncodingJSON rewrites, in place, what go-json writes differently from encoding/json: outside
// strings the exponents e-07, e-08 and e-09 as e-7, e-8 and e-9 (goccy/go-json pull request 596,
// open: its port of the float encoder lacks that step; no other exponent has a leading zero,
// numbers from 1e-6 up to 1e21 being written without one), and inside strings the escapes
// \u0008 and \u000c as \b and \f (encoding/json's since Go 1.22). FuzzAnswer compares the two.
func asEncodingJSON(b []byte) []byte {
	w, inStr := 0, false
	for r := 0; r < len(b); r++ {
		ch := b[r]
		switch {
		case inStr && ch == '\\' && r+1 < len(b):
			if r+5 < len(b) && b[r+1] == 'u' && b[r+2] == '0' && b[r+3] == '0' && b[r+4] == '0' && (b[r+5] == '8' || b[r+5] == 'c') {
				b[w], b[w+1] = '\\', 'b'
				if b[r+5] == 'c' {
					b[w+1] = 'f'
				}
				w, r = w+2, r+5
				continue
			}
			b[w] = ch
			w, r = w+1, r+1
			ch = b[r]
		case inStr:
			inStr = ch != '"'
		case ch == '"':
			inStr = true
		case ch == '0' && w >= 2 && b[w-1] == '-' && b[w-2] == 'e' && r+1 < len(b) && b[r+1] >= '1' && b[r+1] <= '9' &&
			(r+2 == len(b) || b[r+2] < '0' || b[r+2] > '9'):
			continue // e-0d: drop the zero
		}
		b[w] = ch
		w++
	}
	return b[:w]
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
