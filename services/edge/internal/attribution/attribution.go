// Package attribution renames the operator-named parts of the public API. The services name
// the operator's own attribution with the word "service" (serviceEntity, serviceLabel, the
// search toggles serviceEntities, serviceAddresses and their *Offset pages, the circulating
// supply at /service/circulating). An operator migrating from the hosted API whose clients
// read another word sets OPERATOR_NAME, and the edge alone translates, in one place, instead
// of every service's renderers: query parameters and the operator-named paths on the way in, JSON
// object keys of every response on the way out (a streaming rewrite, no buffering of bodies),
// and the OpenAPI document it serves. With the default word nothing is wrapped and nothing
// costs anything.
package attribution

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// Default is the word the services use.
const Default = "service"

// NativeCirculating is the route that answers the operator token's circulating supply.
const NativeCirculating = "/native/circulating"

// ExchangeTokens is the route that answers the tokens the operator's exchange lists.
const ExchangeTokens = "/token/" + Default + "_exchange_tokens"

var validName = regexp.MustCompile(`^[a-z][a-z0-9]{0,31}$`)

// Names translates between the services' word and the operator's.
type Names struct{ word string }

// New checks the operator's word: lower-case letters and digits, starting with a letter, so
// that it makes valid, unambiguous camelCase names and a path segment.
func New(word string) (Names, error) {
	if word == "" {
		word = Default
	}
	if !validName.MatchString(word) {
		return Names{}, fmt.Errorf("OPERATOR_NAME %q must match %s", word, validName)
	}
	return Names{word: word}, nil
}

// Renamed reports whether the operator's word differs from the services'.
func (n Names) Renamed() bool { return n.word != Default }

// Word is the operator's word.
func (n Names) Word() string { return n.word }

// operatorNamed reports whether name is word followed by an upper-case letter
// (serviceEntity, not services or serviceable).
func operatorNamed(name, word string) bool {
	return len(name) > len(word) && strings.HasPrefix(name, word) && name[len(word)] >= 'A' && name[len(word)] <= 'Z'
}

// Outward renames one services' name to the operator's (serviceLabel -> acmeLabel).
func (n Names) Outward(name string) string {
	if operatorNamed(name, Default) {
		return n.word + name[len(Default):]
	}
	return name
}

// Inward renames one operator name to the services' (acmeEntities -> serviceEntities).
func (n Names) Inward(name string) string {
	if operatorNamed(name, n.word) {
		return Default + name[len(n.word):]
	}
	return name
}

// CirculatingPath is the public path of the circulating supply: /<word>/circulating.
func (n Names) CirculatingPath() string { return "/" + n.word + "/circulating" }

// ExchangeTokensPath is the public path of the operator exchange's tokens:
// /token/<word>_exchange_tokens.
func (n Names) ExchangeTokensPath() string { return "/token/" + n.word + "_exchange_tokens" }

// operatorPaths maps each operator-named public path to the route that answers it.
func (n Names) operatorPaths() map[string]string {
	return map[string]string{n.CirculatingPath(): NativeCirculating, n.ExchangeTokensPath(): ExchangeTokens}
}

// Wrap translates requests and responses around next. The operator-named paths are translated
// for every word (the circulating supply is /service/circulating by default); the rest only
// when the word differs.
func (n Names) Wrap(next http.Handler) http.Handler {
	paths := n.operatorPaths()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// In any encoding of its letters, as the edge routes a path by its canonical form; an
		// encoded "/" is data inside a segment, so "/acme%2Fcirculating" is another path.
		if to, ok := paths[r.URL.Path]; ok && to != r.URL.Path && !strings.Contains(strings.ToUpper(r.URL.RawPath), "%2F") {
			r2 := r.Clone(r.Context())
			r2.URL.Path, r2.URL.RawPath = to, ""
			r = r2
		}
		// A stream's upgrade passes as it is (its frames are not rewritten; the response writer
		// must stay hijackable). Only the stream routes (/ws/...) are upgraded: an Upgrade header
		// on another route is dropped later, so it must not skip the translation here.
		if !n.Renamed() || (r.Header.Get("Upgrade") != "" && strings.HasPrefix(r.URL.Path, "/ws/")) {
			next.ServeHTTP(w, r)
			return
		}
		if r.URL.RawQuery != "" {
			q := r.URL.Query()
			renamed := false
			for k, v := range q {
				if in := n.Inward(k); in != k {
					delete(q, k)
					q[in] = append(q[in], v...)
					renamed = true
				}
			}
			if renamed {
				r2 := r.Clone(r.Context())
				r2.URL.RawQuery = q.Encode()
				r = r2
			}
		}
		next.ServeHTTP(&keyWriter{ResponseWriter: w, rw: NewKeyRewriter(n)}, r)
	})
}

// keyWriter rewrites JSON response bodies as they are written.
type keyWriter struct {
	http.ResponseWriter
	rw      *KeyRewriter
	decided bool
	json    bool
}

func (k *keyWriter) WriteHeader(status int) {
	if !k.decided {
		k.decided = true
		// A compressed body is passed as it is: its bytes are not JSON text.
		k.json = strings.HasPrefix(k.Header().Get("Content-Type"), "application/json") && k.Header().Get("Content-Encoding") == ""
		if k.json {
			k.Header().Del("Content-Length") // renamed keys change the length
		}
	}
	k.ResponseWriter.WriteHeader(status)
}

func (k *keyWriter) Write(p []byte) (int, error) {
	if !k.decided {
		k.WriteHeader(http.StatusOK)
	}
	if !k.json {
		return k.ResponseWriter.Write(p)
	}
	if _, err := k.ResponseWriter.Write(k.rw.Rewrite(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush passes flushes through (streamed answers stay streamed).
func (k *keyWriter) Flush() {
	if f, ok := k.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (k *keyWriter) Unwrap() http.ResponseWriter { return k.ResponseWriter }
