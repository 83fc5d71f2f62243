// Package http is the user-labels service's HTTP layer: its public routes (reached through the
// edge: /user/labels*, /user/entities*, /user/alerts*, /user/alert_methods*) and its /internal
// API for other services (docs/contracts.md). Handlers decode and check the request shape, call app, and map its errors
// to the one error shape.
//
// Every route acts for the signed caller identity and refuses requests without one, except the
// shareable entity lookup and the alert feed (/internal/alerts*, signed for the service role).
// Labels, entities, alerts and alert methods belong to the identity's user.
package http

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/gin-gonic/gin"
)

// MaxPublicBodyBytes is the body limit of the public routes (API.md: 413 over 1 MiB).
const MaxPublicBodyBytes = httpx.MaxBodyBytes

// MaxInternalBodyBytes is the body limit of the internal routes: a lookup of 10,000 addresses of
// the longest kind fits.
const MaxInternalBodyBytes = 2 << 20

// Register adds the service's routes to e, which must verify identities
// (httpx.IdentityMiddleware) and allow bodies of MaxInternalBodyBytes; public routes get the
// tighter MaxPublicBodyBytes here. e routes on the escaped path (httpx.NewEngine), so a label id
// whose address holds an escaped "/" (base64 TON addresses) stays one path segment.
func Register(e *gin.Engine, svc *app.Service) {
	h := &handlers{svc: svc}

	user := e.Group("/user", httpx.BodyLimit(MaxPublicBodyBytes), httpx.RequireIdentity())
	user.GET("/labels", h.listLabels)
	user.POST("/labels", h.putLabels)
	user.DELETE("/labels", h.deleteLabels)
	user.PUT("/labels/:label", h.updateLabel)
	user.DELETE("/labels/:label", h.deleteLabel)
	user.GET("/entities", h.listEntities)
	user.POST("/entities", h.createEntities)
	user.GET("/entities/:id", h.getEntity)
	user.PUT("/entities/:id", h.replaceEntity)
	user.DELETE("/entities/:id", h.deleteEntity)
	user.PUT("/entities/only_add/:id", h.addAddresses)

	in := e.Group("/internal")
	in.POST("/lookup", httpx.RequireIdentity(), h.lookup)
	in.GET("/entities/:id", httpx.RequireIdentity(), h.internalEntity)
	in.POST("/entities", httpx.RequireIdentity(), h.internalEntities)
	in.GET("/shared/entities/:id", h.sharedEntity)
	in.GET("/additions/:id", httpx.RequireIdentity(), h.additions)
	in.POST("/additions", httpx.RequireIdentity(), h.additionsOf)
	in.GET("/search", httpx.RequireIdentity(), h.search)

	registerAlerts(user, in, h)
}

type handlers struct{ svc *app.Service }

// userOf is the caller's user id; RequireIdentity guarantees there is one.
func userOf(c *gin.Context) string {
	id, _ := httpx.IdentityFrom(c.Request.Context())
	return id.UserID
}

// body reads the request body as one raw JSON value; false when it has answered already.
func body(c *gin.Context) ([]byte, bool) {
	var raw json.RawMessage
	if !httpx.BindJSON(c, &raw) {
		return nil, false
	}
	return raw, true
}

func rows(c *gin.Context, n int) { c.Header(httpx.HeaderRows, strconv.Itoa(n)) }

func (h *handlers) listLabels(c *gin.Context) {
	body, n, err := h.svc.LabelsJSON(c.Request.Context(), userOf(c))
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	rows(c, n)
	c.Data(http.StatusOK, "application/json; charset=utf-8", body)
}

func (h *handlers) putLabels(c *gin.Context) {
	raw, ok := body(c)
	if !ok {
		return
	}
	in, err := decodeLabels(raw)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	ls, err := h.svc.PutLabels(c.Request.Context(), userOf(c), in)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	rows(c, len(ls))
	c.JSON(http.StatusOK, ls)
}

func (h *handlers) updateLabel(c *gin.Context) {
	raw, ok := body(c)
	if !ok {
		return
	}
	u, err := decodeLabelUpdate(raw)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	l, err := h.svc.UpdateLabel(c.Request.Context(), userOf(c), c.Param("label"), u)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, l)
}

type deleted struct {
	Deleted int `json:"deleted"`
}

func (h *handlers) deleteLabels(c *gin.Context) {
	refs, err := labelsParam(h.svc.ChainTypes(), c.Request.URL.Query())
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	h.finishDelete(c, refs)
}

func (h *handlers) deleteLabel(c *gin.Context) {
	refs, err := h.svc.ChainTypes().ParseLabelIDs("label", []string{c.Param("label")}, false)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	h.finishDelete(c, refs)
}

func (h *handlers) finishDelete(c *gin.Context, refs []app.AddressRef) {
	n, err := h.svc.DeleteLabels(c.Request.Context(), userOf(c), refs)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, deleted{Deleted: n})
}

func (h *handlers) listEntities(c *gin.Context) {
	with, err := params.Bool(c.Request.URL.Query(), "includeAddresses", false)
	if err != nil {
		httpx.Fail(c, httpx.BadRequest("%v", err))
		return
	}
	es, err := h.svc.Entities(c.Request.Context(), userOf(c), with)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	rows(c, len(es))
	c.JSON(http.StatusOK, es)
}

func (h *handlers) createEntities(c *gin.Context) {
	raw, ok := body(c)
	if !ok {
		return
	}
	bodies, array, err := decodeEntities(raw)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	es, err := h.svc.CreateEntities(c.Request.Context(), userOf(c), bodies, array)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	rows(c, len(es))
	c.JSON(http.StatusOK, es)
}

func (h *handlers) getEntity(c *gin.Context) {
	e, err := h.svc.Entity(c.Request.Context(), userOf(c), c.Param("id"))
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, e)
}

func (h *handlers) replaceEntity(c *gin.Context) {
	raw, ok := body(c)
	if !ok {
		return
	}
	b, err := decodeEntity(raw)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	e, err := h.svc.ReplaceEntity(c.Request.Context(), userOf(c), c.Param("id"), b)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, e)
}

func (h *handlers) addAddresses(c *gin.Context) {
	raw, ok := body(c)
	if !ok {
		return
	}
	addrs, err := decodeAddresses(raw)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	out, err := h.svc.AddAddresses(c.Request.Context(), userOf(c), c.Param("id"), addrs)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) deleteEntity(c *gin.Context) {
	n, err := h.svc.DeleteEntity(c.Request.Context(), userOf(c), c.Param("id"))
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, deleted{Deleted: n})
}

// lookupRequest is the POST /internal/lookup body.
type lookupRequest struct {
	Addresses []app.AddressRef `json:"addresses"`
}

// lookup is POST /internal/lookup[?additions=true]: the caller's labels and memberships of the
// addresses and, when asked, the caller's additions to every operator entity, so a caller that
// needs both (grouped /token/holders at balances) makes one call.
func (h *handlers) lookup(c *gin.Context) {
	withAdditions, err := params.Bool(c.Request.URL.Query(), "additions", false)
	if err != nil {
		httpx.Fail(c, httpx.BadRequest("%v", err))
		return
	}
	var req lookupRequest
	if !httpx.BindJSON(c, &req) {
		return
	}
	ctx := c.Request.Context()
	out, err := h.svc.Lookup(ctx, userOf(c), req.Addresses)
	if err == nil && withAdditions {
		out.Additions, err = h.svc.AllAdditions(ctx, userOf(c))
	}
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	httpx.FastJSON(c, http.StatusOK, out)
}

func (h *handlers) internalEntity(c *gin.Context) { h.getEntity(c) }

// entitiesRequest is the POST /internal/entities and POST /internal/additions body.
type entitiesRequest struct {
	IDs []string `json:"ids"`
}

// internalEntities is POST /internal/entities: the caller's entities among the ids, with their
// addresses ({"entities": [UserEntity]}, in the order asked; ids of none are left out), so a
// service resolving many user entity references of one request makes one call.
func (h *handlers) internalEntities(c *gin.Context) {
	var req entitiesRequest
	if !httpx.BindJSON(c, &req) {
		return
	}
	es, err := h.svc.EntitiesByID(c.Request.Context(), userOf(c), req.IDs)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"entities": es})
}

func (h *handlers) sharedEntity(c *gin.Context) {
	e, err := h.svc.SharedEntity(c.Request.Context(), c.Param("id"))
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, e)
}

func (h *handlers) additions(c *gin.Context) {
	addrs, err := h.svc.Additions(c.Request.Context(), userOf(c), c.Param("id"))
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"addresses": addrs})
}

// additionsOf is POST /internal/additions: the caller's additions to the operator entities
// among the ids ({"additions": {id: {chainType: [..]}}}, entities with none absent), so a
// service resolving many operator entity references of one request makes one call.
func (h *handlers) additionsOf(c *gin.Context) {
	var req entitiesRequest
	if !httpx.BindJSON(c, &req) {
		return
	}
	out, err := h.svc.AdditionsOf(c.Request.Context(), userOf(c), req.IDs)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"additions": out})
}

// search is GET /internal/search?query=&limit=&offset=: the caller's matching labels and
// entities.
func (h *handlers) search(c *gin.Context) {
	q := c.Request.URL.Query()
	query, err := params.One(q, "query")
	if err != nil {
		httpx.Fail(c, httpx.BadRequest("%v", err))
		return
	}
	limit, err := params.Int(q, "limit", 10, 0, app.MaxSearchResults)
	if err != nil {
		httpx.Fail(c, httpx.BadRequest("%v", err))
		return
	}
	offset, err := params.Int(q, "offset", 0, 0, app.MaxSearchOffset)
	if err != nil {
		httpx.Fail(c, httpx.BadRequest("%v", err))
		return
	}
	out, err := h.svc.Search(c.Request.Context(), userOf(c), query, limit, offset)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
