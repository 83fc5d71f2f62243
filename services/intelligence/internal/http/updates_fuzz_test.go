package http

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

var updateKinds = []string{"entities", "addresses", "tags", "address_tags"}

// FuzzParseUpdateFilters: for every change feed, any query string either parses into filters
// the feed takes (another feed's filters left unset, chains as distinct known chain types, 0x
// addresses lower case, a scalar filter set only when given) or is a 400 naming the parameter.
func FuzzParseUpdateFilters(f *testing.F) {
	for _, s := range []string{
		"chain=ethereum,base&address=0xABCdef", "chain=nochain", "entityId=binance&entityType=cex,dex", "label=Hot&service=true",
		"service=maybe", "tagId=ofac-sanctioned&tagParams=", "tagParams=a&tagParams=b", "includeTags=true&includeClusters=false",
		"includeEntityPredictions=2", "depositExchangeId=kraken&category=x", "address=0X00&address=0x00", "chain=ethereum&chain=arbitrum_one",
	} {
		for k := range updateKinds {
			f.Add(s, uint8(k))
		}
	}
	f.Fuzz(func(t *testing.T, raw string, kind uint8) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		k := updateKinds[int(kind)%len(updateKinds)]
		var u store.UpdatesQuery
		inc, err := ParseUpdateFilters(q, k, &u)
		if err != nil {
			var se *httpx.StatusError
			if !errors.As(err, &se) || se.Status != 400 {
				t.Fatalf("%s %q: error %v is not a 400", k, raw, err)
			}
			if !namesAParameter(se.Message, updateFilters[k]) {
				t.Fatalf("%s %q: %q names no parameter", k, raw, se.Message)
			}
			return
		}
		checkUpdateFilters(t, k, raw, q, u, inc)
	})
}

func namesAParameter(msg string, names []string) bool {
	for _, n := range append(slices.Clone(names), "includeTags", "includeEntityPredictions", "includeClusters") {
		if strings.HasPrefix(msg, n+":") {
			return true
		}
	}
	return false
}

// checkUpdateFilters checks what ParseUpdateFilters accepted from q for feed k.
func checkUpdateFilters(t *testing.T, k, raw string, q url.Values, u store.UpdatesQuery, inc app.EnrichOptions) {
	t.Helper()
	takes := func(name string) bool { return slices.Contains(updateFilters[k], name) }
	set := map[string]bool{"chain": len(u.ChainTypes) > 0, "address": len(u.Addresses) > 0, "entityId": len(u.EntityIDs) > 0,
		"entityType": len(u.EntityType) > 0, "label": u.Label != "", "service": u.Service != nil, "depositExchangeId": len(u.DepositIDs) > 0,
		"tagId": len(u.TagIDs) > 0, "tagParams": u.TagParams != nil, "category": len(u.Categories) > 0}
	for name, isSet := range set {
		if isSet && !takes(name) {
			t.Fatalf("%s %q: set %s, a filter this feed does not take", k, raw, name)
		}
		if isSet && !q.Has(name) {
			t.Fatalf("%s %q: set %s, which was not given", k, raw, name)
		}
	}
	if takes("tagParams") && q.Has("tagParams") != (u.TagParams != nil) {
		t.Fatalf("%s %q: tagParams given %v, set %v", k, raw, q.Has("tagParams"), u.TagParams != nil)
	}
	if takes("service") && q.Has("service") != (u.Service != nil) {
		t.Fatalf("%s %q: service given %v, set %v", k, raw, q.Has("service"), u.Service != nil)
	}
	seen := map[string]bool{}
	for _, ct := range u.ChainTypes {
		if _, err := chains.ParseType(ct); seen[ct] || err != nil {
			t.Fatalf("%s %q: chain types %v", k, raw, u.ChainTypes)
		}
		seen[ct] = true
	}
	for _, a := range u.Addresses {
		if a == "" || strings.HasPrefix(a, "0X") || strings.HasPrefix(a, "0x") && strings.ToLower(a) != a {
			t.Fatalf("%s %q: address %q not canonical", k, raw, a)
		}
	}
	if k != "addresses" && inc != (app.EnrichOptions{Clusters: true}) {
		t.Fatalf("%s %q: includes %+v on a feed without them", k, raw, inc)
	}
}
