package http

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// ImportingRetryAfter is the Retry-After, in seconds, of a 503 while the imports at start run.
const ImportingRetryAfter = 5

type windowBody struct {
	IDs    []string `json:"ids"`
	FromMs *int64   `json:"fromMs"`
	ToMs   *int64   `json:"toMs"`
}

type windowAnswer struct {
	Prices map[string][]app.WindowPoint `json:"prices"`
}

// priceWindow answers POST /internal/prices/window {"ids":[...],"fromMs":..,"toMs":..} with
// {"prices":{"<id>":[{"timeMs":..,"price":..}]}}: each id's points with fromMs <= time <= toMs,
// oldest first (ids without any are absent), for ingest to price blocks whose prices the broker
// no longer holds. 503 with Retry-After while the imports at start run (app.ErrImporting).
func (h *handlers) priceWindow(c *gin.Context) {
	var b windowBody
	if !httpx.BindJSON(c, &b) {
		return
	}
	if err := checkWindow(b); err != nil {
		fail(c, err)
		return
	}
	from, to := time.UnixMilli(*b.FromMs).UTC(), time.UnixMilli(*b.ToMs).UTC()
	ps, err := h.svc.PriceWindow(c.Request.Context(), b.IDs, from, to)
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, windowAnswer{Prices: ps})
}

func checkWindow(b windowBody) error {
	if len(b.IDs) > app.MaxWindowIDs {
		return params.Errorf("ids", "more than %d", app.MaxWindowIDs)
	}
	for _, id := range b.IDs {
		if err := PricingID(id); err != nil {
			return params.Errorf("ids", "%q must be a pricing id such as ethereum", params.Trunc(id))
		}
	}
	switch {
	case b.FromMs == nil:
		return params.Errorf("fromMs", "required (milliseconds since the epoch)")
	case b.ToMs == nil:
		return params.Errorf("toMs", "required (milliseconds since the epoch)")
	case *b.ToMs < *b.FromMs:
		return params.Errorf("toMs", "must not be before fromMs")
	case *b.ToMs-*b.FromMs > app.MaxWindow.Milliseconds():
		return params.Errorf("toMs", "the window from fromMs is longer than %dh", int(app.MaxWindow.Hours()))
	}
	return nil
}
