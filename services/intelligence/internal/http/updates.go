package http

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/gin-gonic/gin"
)

func (h handlers) updates(kind string) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, err := ParseUpdates(c.Request.URL.Query())
		if err != nil {
			fail(c, err)
			return
		}
		p, err := h.a.Updates(c.Request.Context(), kind, q)
		if err != nil {
			fail(c, err)
			return
		}
		c.JSON(http.StatusOK, p)
	}
}

// ParseUpdates reads a change feed's paging parameters: since (or its alias from) and to, each
// Unix milliseconds or RFC 3339; status new, updated, deleted or all; limit 1..1000 (100); and
// pageToken, the token a previous page returned.
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
