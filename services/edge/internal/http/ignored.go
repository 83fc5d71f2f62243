package http

import (
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/chainintel/chainintel/services/edge/internal/openapi"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
)

// HeaderIgnoredParameters names the query parameters of a request that its route does not take
// (docs/contracts.md: they are ignored, as the mirrored API ignores them), so a client can see
// that a misspelt filter was not applied.
const HeaderIgnoredParameters = "X-Chainintel-Ignored-Parameters"

// ignoredListMax bounds the names the header lists.
const ignoredListMax = 20

// headerSafeName is a query parameter name the header may carry as it is: anything else (a
// control character, a comma) is listed as "?", so no caller's name can shape the header.
var headerSafeName = regexp.MustCompile(`^[A-Za-z0-9_.\[\]-]{1,64}$`)

// IgnoredParameters is the middleware that sets HeaderIgnoredParameters on the answer of a
// request naming query parameters its operation does not document (openapi.json, which lists
// every parameter a route takes, honoured or accepted and ignored). A route the document does
// not describe is passed through.
func IgnoredParameters() (Middleware, error) {
	params, err := openapi.QueryParameters()
	if err != nil {
		return nil, err
	}
	return func(rt routes.Route, next http.Handler) http.Handler {
		known, ok := params[openapi.OperationKey(rt.Method, rt.Pattern)]
		if !ok {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.RawQuery != "" {
				if names := ignoredNames(r.URL.Query(), known); len(names) > 0 {
					w.Header().Set(HeaderIgnoredParameters, strings.Join(names, ","))
				}
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

// ignoredNames lists, sorted and at most ignoredListMax, the names of q that known lacks.
func ignoredNames(q map[string][]string, known map[string]bool) []string {
	var names []string
	for name := range q {
		if known[name] {
			continue
		}
		if !headerSafeName.MatchString(name) {
			name = "?"
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) > ignoredListMax {
		names = append(names[:ignoredListMax], "...")
	}
	return names
}
