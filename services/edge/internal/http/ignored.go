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
// not describe is passed through. outward names a parameter as the client sent it (the
// operator-name translation renamed it before routing); nil leaves names as they are.
func IgnoredParameters(outward func(string) string) (Middleware, error) {
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
				if names := ignoredNames(r.URL.Query(), known, outward); len(names) > 0 {
					w.Header().Set(HeaderIgnoredParameters, strings.Join(names, ","))
				}
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

// ignoredNames lists, sorted and at most ignoredListMax, the names of q that known lacks, in
// time linear in q's names (a query may hold thousands).
func ignoredNames(q map[string][]string, known map[string]bool, outward func(string) string) []string {
	var names []string
	unsafe := false
	for name := range q {
		if known[name] {
			continue
		}
		if outward != nil {
			name = outward(name)
		}
		if !headerSafeName.MatchString(name) {
			unsafe = true
			continue
		}
		names = append(names, name) // q's keys are distinct, and so are their outward names
	}
	if unsafe {
		names = append(names, "?")
	}
	slices.Sort(names)
	if len(names) > ignoredListMax {
		names = append(names[:ignoredListMax], "...")
	}
	return names
}
