package http

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/gin-gonic/gin"
)

func (h handlers) updates(kind string) gin.HandlerFunc {
	return func(c *gin.Context) {
		raw := c.Request.URL.Query()
		q, err := ParseUpdates(raw)
		if err != nil {
			fail(c, err)
			return
		}
		inc, err := ParseUpdateFilters(raw, kind, &q)
		if err != nil {
			httpx.Fail(c, err)
			return
		}
		p, err := h.a.Updates(c.Request.Context(), kind, q, inc)
		if err != nil {
			fail(c, err)
			return
		}
		c.JSON(http.StatusOK, p)
	}
}

// ParseUpdates reads a change feed's paging parameters: since (or its alias from) and to, each
// Unix milliseconds or RFC 3339; status new, updated, deleted or all; limit 1..1000 (100);
// orderBy diff_seq or diff_ts (oldest first, the default) or -diff_seq or -diff_ts (newest
// first; sequence and time order agree); and pageToken, the token a previous page returned,
// which continues in the same order.
func ParseUpdates(q url.Values) (store.UpdatesQuery, error) {
	out := store.UpdatesQuery{From: time.Unix(0, 0).UTC(), To: time.UnixMilli(253402300799999).UTC()}
	since, err := params.One(q, "since")
	if err != nil {
		return out, httpx.BadRequest("%v", err)
	}
	from, err := params.One(q, "from")
	if err != nil {
		return out, httpx.BadRequest("%v", err)
	}
	if since != "" && from != "" {
		return out, httpx.BadRequest("since: give since or from, not both (they are the same)")
	}
	name := "since"
	if from != "" {
		since, name = from, "from"
	}
	if since != "" {
		if out.From, err = params.Time(since); err != nil {
			return out, httpx.BadRequest("%s: %v", name, err)
		}
	}
	if to, err := params.One(q, "to"); err != nil {
		return out, httpx.BadRequest("%v", err)
	} else if to != "" {
		if out.To, err = params.Time(to); err != nil {
			return out, httpx.BadRequest("to: %v", err)
		}
	}
	if out.To.Before(out.From) {
		return out, httpx.BadRequest("to: must not be before %s", name)
	}
	if out.Status, err = params.Enum(q, "status", "all", "new", "updated", "deleted", "all"); err != nil {
		return out, httpx.BadRequest("%v", err)
	}
	if out.Status == "all" {
		out.Status = ""
	}
	if out.Limit, err = params.Int(q, "limit", app.DefaultUpdates, 1, app.MaxUpdates); err != nil {
		return out, httpx.BadRequest("%v", err)
	}
	order, err := params.Enum(q, "orderBy", "diff_seq", "diff_seq", "diff_ts", "-diff_seq", "-diff_ts")
	if err != nil {
		return out, httpx.BadRequest("%v", err)
	}
	out.Desc = strings.HasPrefix(order, "-")
	tok, err := params.One(q, "pageToken")
	if err != nil {
		return out, httpx.BadRequest("%v", err)
	}
	if tok != "" {
		if out.After, err = strconv.ParseInt(tok, 10, 64); err != nil || out.After < 0 {
			return out, httpx.BadRequest("pageToken: not a token this API returned")
		}
	}
	return out, nil
}

// updateFilters are the filters each change feed takes (the public API's parameters).
var updateFilters = map[string][]string{
	"entities":     {"entityId", "entityType"},
	"addresses":    {"chain", "address", "entityId", "entityType", "label", "service", "depositExchangeId", "tagId", "tagParams"},
	"tags":         {"tagId", "category"},
	"address_tags": {"chain", "address", "tagId", "tagParams", "entityId", "category"},
}

// ParseUpdateFilters reads the filters of a change feed of kind into q (lists are
// comma-separated or repeated; chain names become chain types, 0x addresses lower case) and,
// for the addresses feed, what to include: includeTags (false), includeEntityPredictions
// (false), includeClusters (true). A filter another feed takes is ignored, as any unknown
// parameter.
func ParseUpdateFilters(raw url.Values, kind string, q *store.UpdatesQuery) (app.EnrichOptions, error) {
	inc := app.EnrichOptions{Clusters: true}
	for _, name := range updateFilters[kind] {
		if err := updateFilter(raw, name, q); err != nil {
			return inc, err
		}
	}
	if kind != "addresses" {
		return inc, nil
	}
	var err error
	if inc.Tags, err = params.Bool(raw, "includeTags", false); err != nil {
		return inc, httpx.BadRequest("%v", err)
	}
	if inc.Predictions, err = params.Bool(raw, "includeEntityPredictions", false); err != nil {
		return inc, httpx.BadRequest("%v", err)
	}
	if inc.Clusters, err = params.Bool(raw, "includeClusters", true); err != nil {
		return inc, httpx.BadRequest("%v", err)
	}
	return inc, nil
}

func updateFilter(raw url.Values, name string, q *store.UpdatesQuery) error {
	switch name {
	case "label", "tagParams", "service":
		return updateScalarFilter(raw, name, q)
	}
	vs, err := params.List(raw, name)
	if err != nil {
		return httpx.BadRequest("%v", err)
	}
	switch name {
	case "chain":
		seen := map[string]bool{}
		for _, v := range vs {
			c, ok := chains.Lookup(v)
			if !ok {
				return httpx.BadRequest("chain: unknown chain %q", v)
			}
			if !seen[string(c.Type)] {
				seen[string(c.Type)] = true
				q.ChainTypes = append(q.ChainTypes, string(c.Type))
			}
		}
	case "address":
		for _, v := range vs {
			q.Addresses = append(q.Addresses, address.CanonicalHash(v))
		}
	case "entityId":
		q.EntityIDs = vs
	case "entityType":
		q.EntityType = vs
	case "depositExchangeId":
		q.DepositIDs = vs
	case "tagId":
		q.TagIDs = vs
	case "category":
		q.Categories = vs
	}
	return nil
}

// updateScalarFilter reads a single-valued filter: label, tagParams (given empty, it selects the
// empty parameter) or service.
func updateScalarFilter(raw url.Values, name string, q *store.UpdatesQuery) error {
	switch name {
	case "label":
		v, err := params.One(raw, name)
		if err != nil {
			return httpx.BadRequest("%v", err)
		}
		q.Label = v
		return nil
	case "tagParams":
		v, err := params.One(raw, name)
		if err != nil {
			return httpx.BadRequest("%v", err)
		}
		if _, given := raw[name]; given {
			q.TagParams = &v
		}
		return nil
	case "service":
		if _, given := raw[name]; !given {
			return nil
		}
		v, err := params.Bool(raw, name, false)
		if err != nil {
			return httpx.BadRequest("%v", err)
		}
		q.Service = &v
		return nil
	}
	return nil
}
