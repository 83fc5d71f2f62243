package http

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
	"github.com/gin-gonic/gin"
)

func (h handlers) search(c *gin.Context) {
	r, err := ParseSearch(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	v, err := h.a.Search(c.Request.Context(), r)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// ParseSearch reads GET /intelligence/search's parameters: query; per category (app.SearchCategories)
// a result count `<category>` (0..100, 0 turns it off) and `<category>Offset` (0..10000); and the
// same two as objects, `filterLimits` / `filterOffsets`, given as JSON (`{"tokens":5}`) or as
// deep-object keys (`filterLimits[tokens]=5`). A category's own parameter wins over the object.
func ParseSearch(q url.Values) (app.SearchRequest, error) {
	var r app.SearchRequest
	query, err := params.One(q, "query")
	if err != nil {
		return r, httpx.BadRequest("%v", err)
	}
	if err := app.ValidSearchQuery(query); err != nil {
		return r, httpx.BadRequest("%v", err)
	}
	r.Query = query
	limits, err := filterObject(q, "filterLimits", app.MaxSearchResults)
	if err != nil {
		return r, err
	}
	offsets, err := filterObject(q, "filterOffsets", app.MaxSearchOffset)
	if err != nil {
		return r, err
	}
	r.Pages = make(map[string]app.SearchPage, len(app.SearchCategories))
	for _, cat := range app.SearchCategories {
		p := app.SearchPage{Limit: app.DefaultSearchResults}
		if n, ok := limits[cat]; ok {
			p.Limit = n
		}
		if n, ok := offsets[cat]; ok {
			p.Offset = n
		}
		if p.Limit, err = params.Int(q, cat, p.Limit, 0, app.MaxSearchResults); err != nil {
			return r, httpx.BadRequest("%v", err)
		}
		if p.Offset, err = params.Int(q, cat+"Offset", p.Offset, 0, app.MaxSearchOffset); err != nil {
			return r, httpx.BadRequest("%v", err)
		}
		r.Pages[cat] = p
	}
	return r, nil
}

// filterObject reads name as a JSON object of category → integer in 0..max, merged with
// name[category]=n keys.
func filterObject(q url.Values, name string, max int) (map[string]int, error) {
	out := map[string]int{}
	raw, err := params.One(q, name)
	if err != nil {
		return nil, httpx.BadRequest("%v", err)
	}
	if raw != "" {
		var m map[string]json.Number
		d := json.NewDecoder(strings.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&m); err != nil || d.More() {
			return nil, httpx.BadRequest("%s: must be a JSON object of category to count, like {\"tokens\":5}", name)
		}
		for k, v := range m {
			n, err := strconv.Atoi(v.String())
			if err != nil {
				return nil, httpx.BadRequest("%s.%s: must be an integer, got %s", name, short(k), short(v.String()))
			}
			if err := put(out, name+"."+k, k, n, max); err != nil {
				return nil, err
			}
		}
	}
	for key := range q {
		cat, ok := strings.CutPrefix(key, name+"[")
		if !ok {
			continue
		}
		cat, ok = strings.CutSuffix(cat, "]")
		if !ok {
			return nil, httpx.BadRequest("%s: a key must look like %s[category]", short(key), name)
		}
		n, err := params.Int(q, key, 0, 0, max)
		if err != nil {
			return nil, httpx.BadRequest("%v", err)
		}
		if err := put(out, key, cat, n, max); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func put(out map[string]int, param, cat string, n, max int) error {
	if !slices.Contains(app.SearchCategories, cat) {
		return httpx.BadRequest("%s: unknown search category %q (one of %s)", short(param), short(cat), strings.Join(app.SearchCategories, ", "))
	}
	if n < 0 || n > max {
		return httpx.BadRequest("%s: must be between 0 and %d, got %d", short(param), max, n)
	}
	out[cat] = n
	return nil
}

func short(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
