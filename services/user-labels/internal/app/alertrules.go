package app

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
)

// AlertBody is an alert body (POST, PUT /user/alerts) as decoded: the required fields present
// (Name, Enabled, MethodID non-nil; base given, maybe null), the bounds as the JSON number text.
type AlertBody struct {
	Name                     *string
	Enabled                  *bool
	Base                     []string // nil: null
	From, To, Tokens, Chains []string // Chains nil: null or absent
	USDGte, USDLte           *string
	ValueGte, ValueLte       *string
	Description              *string
	MethodID                 *int64
	// OrgID and Tier are the caller's, from its identity (the handler sets them; no body field).
	OrgID, Tier string
}

// AlertMethodBody is a POST /user/alert_methods body as decoded.
type AlertMethodBody struct {
	URL         *string
	Description *string
}

// ValidateAlert checks b against the rules of a stream filter (docs/stream-fanout.md,
// "Filters") and the alert limits; the error is a 400 naming the field. Names (entities,
// tokens, entity types) are checked for their form only: the deliverer resolves them.
func (s *Service) ValidateAlert(b AlertBody) (AlertInput, error) {
	var in AlertInput
	if b.Name == nil || b.Enabled == nil || b.MethodID == nil {
		return in, errors.New("alert body without its required fields") // the decoder's duty
	}
	in.Name, in.Enabled, in.MethodID, in.Description = *b.Name, *b.Enabled, *b.MethodID, b.Description
	in.OrgID, in.Tier = b.OrgID, b.Tier
	if err := checkText("", "name", in.Name, MaxAlertNameRunes, true); err != nil {
		return in, err
	}
	if strings.TrimSpace(in.Name) == "" {
		// A name of spaces names nothing a caller could tell apart in a list of alerts.
		return in, httpx.BadRequest("name: must not be blank")
	}
	if in.Description != nil {
		if err := checkText("", "description", *in.Description, MaxAlertDescriptionRunes, false); err != nil {
			return in, err
		}
	}
	var err error
	if in.Base, err = alertRefs("base", b.Base, false, false); err != nil {
		return in, err
	}
	if in.From, err = alertRefs("from", b.From, true, true); err != nil {
		return in, err
	}
	if in.To, err = alertRefs("to", b.To, true, true); err != nil {
		return in, err
	}
	if in.Tokens, err = alertTokens(b.Tokens); err != nil {
		return in, err
	}
	if in.Chains, err = s.alertChains(b.Chains); err != nil {
		return in, err
	}
	if in.USDGte, in.USDLte, err = alertBounds("usdGte", "usdLte", b.USDGte, b.USDLte); err != nil {
		return in, err
	}
	if in.ValueGte, in.ValueLte, err = alertBounds("valueGte", "valueLte", b.ValueGte, b.ValueLte); err != nil {
		return in, err
	}
	if b.Base == nil {
		in.Base = nil // null stays null
	}
	if !selective(in) && (in.USDGte == nil || *in.USDGte < MinAlertUSDAlone) {
		return in, httpx.BadRequest("body: give at least one address, entity, type:<entityType> or deposit:<entityId> in from, to or base (not excluded), a token, or usdGte of at least %d", MinAlertUSDAlone)
	}
	return in, nil
}

// selective reports whether in names something a transfer must involve: any base or token, or
// a from or to value that is not an exclusion (the stream filter's Selective).
func selective(in AlertInput) bool {
	if len(in.Base) > 0 || len(in.Tokens) > 0 {
		return true
	}
	for _, v := range slices.Concat(in.From, in.To) {
		if !strings.HasPrefix(v, "!") {
			return true
		}
	}
	return false
}

// splitValues splits each value on commas, trims the parts and drops empty and repeated ones,
// as a stream filter's lists are read; never nil.
func splitValues(vals []string) []string {
	out := []string{}
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// alertRefs checks the values of an address-or-entity list and returns them as stored: split,
// trimmed and distinct (an exclusion as "!<value>"), each as given otherwise.
func alertRefs(name string, vals []string, negation, prefixes bool) ([]string, error) {
	out := splitValues(vals)
	if len(out) > MaxAlertValues {
		return nil, httpx.BadRequest("%s: more than %d values", name, MaxAlertValues)
	}
	for i, v := range out {
		r, err := params.ParseReference(name, v, negation, prefixes)
		if err != nil {
			return nil, httpx.BadRequest("%v", err)
		}
		if r.Negate {
			out[i] = "!" + strings.TrimSpace(v[1:])
		}
	}
	return out, nil
}

func alertTokens(vals []string) ([]string, error) {
	out := splitValues(vals)
	if len(out) > MaxAlertValues {
		return nil, httpx.BadRequest("tokens: more than %d values", MaxAlertValues)
	}
	for _, v := range out {
		if _, _, err := params.ParseToken("tokens", v); err != nil {
			return nil, httpx.BadRequest("%v", err)
		}
	}
	return out, nil
}

// alertChains checks the chain names against the deployment's chains; nil (null) stays nil.
func (s *Service) alertChains(vals []string) ([]string, error) {
	if vals == nil {
		return nil, nil
	}
	names := splitValues(vals)
	if len(names) > MaxAlertValues {
		return nil, httpx.BadRequest("chains: more than %d values", MaxAlertValues)
	}
	if _, err := params.ResolveChains("chains", names, s.alerts.chains); err != nil {
		return nil, httpx.BadRequest("%v", err)
	}
	return names, nil
}

// alertBounds parses a Gte/Lte pair: finite numbers, not negative, Gte not above Lte (the
// stream filter's words).
func alertBounds(gteName, lteName string, gte, lte *string) (*float64, *float64, error) {
	g, err := alertNumber(gteName, gte)
	if err != nil {
		return nil, nil, err
	}
	l, err := alertNumber(lteName, lte)
	if err != nil {
		return nil, nil, err
	}
	if g != nil && l != nil && *g > *l {
		return nil, nil, httpx.BadRequest("%s: is greater than %s", gteName, lteName)
	}
	return g, l, nil
}

func alertNumber(name string, v *string) (*float64, error) {
	if v == nil {
		return nil, nil
	}
	f, err := strconv.ParseFloat(*v, 64)
	switch {
	case (err == nil || errors.Is(err, strconv.ErrRange)) && math.IsInf(f, 0):
		return nil, httpx.BadRequest("%s: must be a finite number, got %s", name, params.Trunc(*v))
	case err != nil || math.IsNaN(f):
		return nil, httpx.BadRequest("%s: must be a number, got %s", name, params.Trunc(*v))
	case f < 0:
		return nil, httpx.BadRequest("%s: must not be negative", name)
	}
	if f == 0 {
		f = 0 // -0 is 0
	}
	return &f, nil
}

// ValidateAlertMethod checks a webhook method body: an absolute https:// URL (http:// too when
// the deployment allows it), without userinfo, at most MaxWebhookURLBytes; the description at
// most MaxAlertDescriptionRunes. Whether the host is private is the deliverer's check, at dial
// time.
func (s *Service) ValidateAlertMethod(b AlertMethodBody) (AlertMethod, error) {
	m := AlertMethod{Kind: AlertMethodWebhook, Description: b.Description}
	if b.URL == nil || *b.URL == "" {
		return m, httpx.BadRequest("url: required (the webhook's https:// URL)")
	}
	raw := *b.URL
	if len(raw) > MaxWebhookURLBytes {
		return m, httpx.BadRequest("url: at most %d bytes (got %d)", MaxWebhookURLBytes, len(raw))
	}
	if err := s.checkWebhookURL(raw); err != nil {
		return m, httpx.BadRequest("url: %v", err)
	}
	if b.Description != nil {
		if err := checkText("", "description", *b.Description, MaxAlertDescriptionRunes, false); err != nil {
			return m, err
		}
	}
	m.URL = raw
	return m, nil
}

func (s *Service) checkWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL", params.Trunc(raw))
	}
	schemes := "https://"
	if s.alerts.allowHTTP {
		schemes = "https:// or http://"
	}
	switch {
	case u.Scheme == "https", u.Scheme == "http" && s.alerts.allowHTTP:
	default:
		return fmt.Errorf("%q is not an absolute %s URL", params.Trunc(raw), schemes)
	}
	switch {
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("%q has no host", params.Trunc(raw))
	case u.User != nil:
		return fmt.Errorf("must not hold a user name or password")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("must not hold a fragment (#...)")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q is not 1 to 65535", params.Trunc(p))
		}
	}
	return nil
}
