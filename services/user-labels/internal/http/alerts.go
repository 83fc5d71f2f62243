package http

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/user-labels/client"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/gin-gonic/gin"
)

// registerAlerts adds the alert routes: public (/user/alerts*, /user/alert_methods*) to user,
// internal (/internal/alerts*) to in, answered only for the service role (client.ServiceRole).
func registerAlerts(user, in *gin.RouterGroup, h *handlers) {
	small := httpx.BodyLimit(app.MaxAlertBodyBytes)
	user.GET("/alerts", h.listAlerts)
	user.POST("/alerts", small, h.createAlert)
	user.GET("/alerts/:id", h.getAlert)
	user.PUT("/alerts/:id", small, h.replaceAlert)
	user.DELETE("/alerts/:id", h.deleteAlert)
	user.GET("/alert_methods", h.listAlertMethods)
	user.POST("/alert_methods", small, h.createAlertMethod)
	user.DELETE("/alert_methods/:id", h.deleteAlertMethod)

	in.GET("/alerts", requireService, h.alertFeed)
	in.GET("/alerts/:id", requireService, h.alertByID)
}

// requireService refuses what is not signed for the service role (client.ServiceRole): these
// routes answer every caller's alerts and their signing secrets.
func requireService(c *gin.Context) {
	if id, ok := httpx.IdentityFrom(c.Request.Context()); !ok || id.Role != client.ServiceRole {
		httpx.Error(c, http.StatusUnauthorized, "a service identity is required")
		return
	}
	c.Next()
}

// alertParam is the public AlertParam shape (public-api-shapes.json).
type alertParam struct {
	ID               int64     `json:"id"`
	Name             string    `json:"name"`
	Enabled          bool      `json:"enabled"`
	Base             []string  `json:"base"`
	From             []string  `json:"from"`
	To               []string  `json:"to"`
	Tokens           []string  `json:"tokens"`
	Chains           []string  `json:"chains"`
	USDGte           *float64  `json:"usdGte"`
	USDLte           *float64  `json:"usdLte"`
	ValueGte         *float64  `json:"valueGte"`
	ValueLte         *float64  `json:"valueLte"`
	Description      *string   `json:"description"`
	AlertMethodID    int64     `json:"alertMethodId"`
	CreatedAt        time.Time `json:"createdAt"`
	Shareable        bool      `json:"shareable"`
	OwnerUID         string    `json:"ownerUID"`
	ActivelyFeatured bool      `json:"activelyFeatured"`
}

func publicAlert(a app.Alert) alertParam {
	return alertParam{ID: a.ID, Name: a.Name, Enabled: a.Enabled, Base: a.Base, From: a.From, To: a.To,
		Tokens: a.Tokens, Chains: a.Chains, USDGte: a.USDGte, USDLte: a.USDLte, ValueGte: a.ValueGte,
		ValueLte: a.ValueLte, Description: a.Description, AlertMethodID: a.MethodID, CreatedAt: a.CreatedAt,
		OwnerUID: a.Owner}
}

// decimal renders a bound as the internal API's decimal string ("" when unset).
func decimal(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func orEmpty(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

func internalAlert(a app.Alert) client.Alert {
	return client.Alert{ID: a.ID, Owner: a.Owner, Name: a.Name, Enabled: a.Enabled, Base: orEmpty(a.Base),
		From: orEmpty(a.From), To: orEmpty(a.To), Tokens: orEmpty(a.Tokens), Chains: orEmpty(a.Chains),
		USDGte: decimal(a.USDGte), USDLte: decimal(a.USDLte), ValueGte: decimal(a.ValueGte), ValueLte: decimal(a.ValueLte),
		Method: client.AlertMethod{ID: a.Method.ID, Kind: a.Method.Kind, URL: a.Method.URL, Secret: a.Method.Secret},
		OrgID:  a.OrgID, Tier: a.Tier, UpdatedAt: a.UpdatedAt}
}

// alertMethodView is a delivery method as GET /user/alert_methods answers it; Secret only in
// the answer of its creation.
type alertMethodView struct {
	ID          int64     `json:"id"`
	Kind        string    `json:"kind"`
	URL         string    `json:"url"`
	Description *string   `json:"description"`
	CreatedAt   time.Time `json:"createdAt"`
	Secret      string    `json:"secret,omitempty"`
}

func methodView(m app.AlertMethod) alertMethodView {
	return alertMethodView{ID: m.ID, Kind: m.Kind, URL: m.URL, Description: m.Description, CreatedAt: m.CreatedAt, Secret: m.Secret}
}

// pathID reads the {id} path segment: an integer, else a 400.
func pathID(c *gin.Context) (int64, bool) {
	v := c.Param("id")
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		httpx.Fail(c, httpx.BadRequest("id: must be an integer, got %q", params.Trunc(v)))
		return 0, false
	}
	return id, true
}

func (h *handlers) listAlerts(c *gin.Context) {
	as, err := h.svc.Alerts(c.Request.Context(), userOf(c))
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	out := make([]alertParam, len(as))
	for i, a := range as {
		out[i] = publicAlert(a)
	}
	rows(c, len(out))
	c.JSON(http.StatusOK, out)
}

func (h *handlers) getAlert(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	a, err := h.svc.Alert(c.Request.Context(), userOf(c), id)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, publicAlert(a))
}

// payer sets b's org id and tier to the caller's: who pays the alert's deliveries is whoever
// created or last replaced it, as that caller's stream deliveries would be billed.
func payer(c *gin.Context, b *app.AlertBody) {
	id, _ := httpx.IdentityFrom(c.Request.Context())
	b.OrgID, b.Tier = id.OrgID, id.Tier
}

func (h *handlers) createAlert(c *gin.Context) {
	raw, ok := body(c)
	if !ok {
		return
	}
	b, err := decodeAlert(raw)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	payer(c, &b)
	id, err := h.svc.CreateAlert(c.Request.Context(), userOf(c), b)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, id)
}

func (h *handlers) replaceAlert(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	raw, ok := body(c)
	if !ok {
		return
	}
	b, err := decodeAlert(raw)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	payer(c, &b)
	if err := h.svc.ReplaceAlert(c.Request.Context(), userOf(c), id, b); err != nil {
		httpx.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *handlers) deleteAlert(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	if err := h.svc.DeleteAlert(c.Request.Context(), userOf(c), id); err != nil {
		httpx.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *handlers) listAlertMethods(c *gin.Context) {
	ms, err := h.svc.AlertMethods(c.Request.Context(), userOf(c))
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	out := make([]alertMethodView, len(ms))
	for i, m := range ms {
		out[i] = methodView(m)
	}
	rows(c, len(out))
	c.JSON(http.StatusOK, out)
}

func (h *handlers) createAlertMethod(c *gin.Context) {
	raw, ok := body(c)
	if !ok {
		return
	}
	var b struct {
		URL         *string `json:"url"`
		Description *string `json:"description"`
	}
	if err := decodeObject(raw, &b); err != nil {
		httpx.Fail(c, httpx.BadRequest("body: %v", err))
		return
	}
	m, err := h.svc.CreateAlertMethod(c.Request.Context(), userOf(c), app.AlertMethodBody{URL: b.URL, Description: b.Description})
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, methodView(m))
}

func (h *handlers) deleteAlertMethod(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	if err := h.svc.DeleteAlertMethod(c.Request.Context(), userOf(c), id); err != nil {
		httpx.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// alertFeed is GET /internal/alerts?after=&limit=: every caller's alerts with id > after.
func (h *handlers) alertFeed(c *gin.Context) {
	q := c.Request.URL.Query()
	after := int64(0)
	if v, err := params.One(q, "after"); err != nil {
		httpx.Fail(c, httpx.BadRequest("%v", err))
		return
	} else if v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil {
			httpx.Fail(c, httpx.BadRequest("after: must be an integer, got %q", params.Trunc(v)))
			return
		}
	}
	limit, err := params.Int(q, "limit", app.MaxAlertFeedPage, 1, app.MaxAlertFeedPage)
	if err != nil {
		httpx.Fail(c, httpx.BadRequest("%v", err))
		return
	}
	as, err := h.svc.AlertFeed(c.Request.Context(), after, limit)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	out := make([]client.Alert, len(as))
	for i, a := range as {
		out[i] = internalAlert(a)
	}
	c.JSON(http.StatusOK, gin.H{"alerts": out})
}

// alertByID is GET /internal/alerts/{id}: one alert, whoever owns it; 404 once deleted.
func (h *handlers) alertByID(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	a, err := h.svc.AlertByID(c.Request.Context(), id)
	if err != nil {
		httpx.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, internalAlert(a))
}

// alertBody is an AlertRequest as sent. Bounds stay raw JSON so that a number's text reaches the
// rules unrounded and anything else is refused in JSON's words (boundText).
type alertBody struct {
	Name          *string         `json:"name"`
	Enabled       *bool           `json:"enabled"`
	Base          []string        `json:"base"`
	From          []string        `json:"from"`
	To            []string        `json:"to"`
	Tokens        []string        `json:"tokens"`
	Chains        []string        `json:"chains"`
	USDGte        json.RawMessage `json:"usdGte"`
	USDLte        json.RawMessage `json:"usdLte"`
	ValueGte      json.RawMessage `json:"valueGte"`
	ValueLte      json.RawMessage `json:"valueLte"`
	Description   *string         `json:"description"`
	AlertMethodID *int64          `json:"alertMethodId"`
}

// decodeAlert decodes a POST or PUT /user/alerts body: an AlertRequest with name, enabled, base
// (an array or null) and alertMethodId present; a 400 naming the field otherwise.
func decodeAlert(raw []byte) (app.AlertBody, error) {
	var b alertBody
	if err := decodeObject(raw, &b); err != nil {
		return app.AlertBody{}, httpx.BadRequest("body: %v", err)
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(raw, &present); err != nil {
		return app.AlertBody{}, httpx.BadRequest("body: not valid JSON")
	}
	switch {
	case b.Name == nil:
		return app.AlertBody{}, httpx.BadRequest("name: required")
	case b.Enabled == nil:
		return app.AlertBody{}, httpx.BadRequest("enabled: required (true or false)")
	case present["base"] == nil:
		return app.AlertBody{}, httpx.BadRequest("base: required (an array of addresses or entity ids, or null)")
	case b.AlertMethodID == nil:
		return app.AlertBody{}, httpx.BadRequest("alertMethodId: required (the id of one of your alert methods)")
	}
	out := app.AlertBody{Name: b.Name, Enabled: b.Enabled, Base: b.Base, From: b.From, To: b.To, Tokens: b.Tokens,
		Chains: b.Chains, Description: b.Description, MethodID: b.AlertMethodID}
	if bytes.Equal(bytes.TrimSpace(present["base"]), []byte("null")) {
		out.Base = nil
	} else if out.Base == nil {
		out.Base = []string{}
	}
	if out.Chains == nil && present["chains"] != nil && !bytes.Equal(bytes.TrimSpace(present["chains"]), []byte("null")) {
		out.Chains = []string{}
	}
	for _, n := range []struct {
		name string
		dst  **string
		src  json.RawMessage
	}{{"usdGte", &out.USDGte, b.USDGte}, {"usdLte", &out.USDLte, b.USDLte}, {"valueGte", &out.ValueGte, b.ValueGte}, {"valueLte", &out.ValueLte, b.ValueLte}} {
		var err error
		if *n.dst, err = boundText(n.name, n.src); err != nil {
			return app.AlertBody{}, err
		}
	}
	return out, nil
}

// boundText returns the text of a bound's JSON number, nil for null or absent, or a 400 naming
// the field.
func boundText(name string, raw json.RawMessage) (*string, error) {
	v := bytes.TrimSpace(raw)
	switch {
	case len(v) == 0 || string(v) == "null":
		return nil, nil
	case v[0] == '-' || v[0] >= '0' && v[0] <= '9':
		s := string(v)
		return &s, nil
	}
	return nil, httpx.BadRequest("%s: must be a number or null, not %s", name, kindOf(v))
}

// kindOf words the kind of a JSON value that is not a number.
func kindOf(v []byte) string {
	switch v[0] {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '{':
		return "an object"
	case 't', 'f':
		return "a boolean"
	}
	return "a JSON value"
}
