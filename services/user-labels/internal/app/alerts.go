package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
)

// Limits of alerts and their delivery methods (docs/user-labels.md, "Alerts").
const (
	MaxAlertNameRunes        = 200
	MaxAlertDescriptionRunes = 2000
	MaxAlertValues           = 100        // values in one list of an alert (after splitting)
	MaxAlertBodyBytes        = 64 << 10   // an alert or method body
	DefaultMaxAlertsPerUser  = 100        // USERLABELS_MAX_ALERTS
	MaxAlertMethodsPerUser   = 10         // delivery methods one user may keep
	MaxWebhookURLBytes       = 2048       // a webhook URL
	MinAlertUSDAlone         = 10_000_000 // usdGte an alert naming nothing must reach (the stream's rule)
	MaxAlertFeedPage         = 1000       // alerts in one GET /internal/alerts page
	AlertMethodWebhook       = "webhook"  // the only delivery method kind
)

// AlertStore keeps alerts and their delivery methods. Every method but the feed's (AlertFeed,
// AlertByID) is scoped to one user: another user's alert or method is ErrNotFound, exactly like
// an unknown one. Every write of an alert writes its UserChange (KIND_ALERT) to the outbox in
// the same transaction.
type AlertStore interface {
	// CreateAlertMethod stores m for user and returns it with its id and creation time; an
	// *OwnerLimitError when the user would then keep more than max methods.
	CreateAlertMethod(ctx context.Context, user string, m AlertMethod, max int) (AlertMethod, error)
	// AlertMethods lists the user's methods by id (Secret left empty).
	AlertMethods(ctx context.Context, user string) ([]AlertMethod, error)
	// DeleteAlertMethod deletes the user's method id: ErrNotFound when there is none, an
	// *InUseError naming the alerts using it (nothing is deleted then).
	DeleteAlertMethod(ctx context.Context, user string, id int64) error

	// CreateAlert stores in and returns its id: an *OwnerLimitError when the user would then
	// keep more than max alerts, ErrNoAlertMethod when in.MethodID is none of the user's methods.
	CreateAlert(ctx context.Context, user string, in AlertInput, max int) (int64, error)
	// Alerts lists the user's alerts by id; Alert reads one. Method holds the method's id only.
	Alerts(ctx context.Context, user string) ([]Alert, error)
	Alert(ctx context.Context, user string, id int64) (Alert, error)
	// ReplaceAlert overwrites every field of the user's alert id: ErrNotFound, or
	// ErrNoAlertMethod as CreateAlert.
	ReplaceAlert(ctx context.Context, user string, id int64, in AlertInput) error
	// DeleteAlert deletes the user's alert id: ErrNotFound when there is none.
	DeleteAlert(ctx context.Context, user string, id int64) error

	// AlertFeed returns every user's alerts with id > after, by id, at most limit, each with
	// its whole method (secret included); AlertByID one of them, ErrNotFound when absent.
	AlertFeed(ctx context.Context, after int64, limit int) ([]Alert, error)
	AlertByID(ctx context.Context, id int64) (Alert, error)
}

// AlertInput is a validated alert: lists split on commas, trimmed, distinct and at most
// MaxAlertValues each, every value of the stream filters' syntax; bounds finite, not negative
// and in order.
type AlertInput struct {
	Name    string
	Enabled bool
	// Base and Chains are nil when the caller gave null (answered as null); From, To and Tokens
	// are never nil.
	Base, Chains                       []string
	From, To, Tokens                   []string
	USDGte, USDLte, ValueGte, ValueLte *float64
	Description                        *string
	MethodID                           int64
	// OrgID and Tier are who pays the alert's deliveries: the org id and tier of the caller who
	// created or last replaced it, from the caller's identity (never the body). OrgID is empty
	// for an individual (and for alerts stored before they were kept): the user pays alone.
	OrgID, Tier string
}

// Alert is a stored alert.
type Alert struct {
	AlertInput
	ID        int64
	Owner     string // the user id
	Method    AlertMethod
	CreatedAt time.Time
	UpdatedAt time.Time
}

// AlertMethod is a delivery method: a webhook URL and the secret that signs its deliveries.
type AlertMethod struct {
	ID          int64
	Kind        string
	URL         string
	Description *string
	Secret      string
	CreatedAt   time.Time
}

// ErrNoAlertMethod is returned by the store when an alert names a method the user does not have.
var ErrNoAlertMethod = errors.New("no such alert method")

// InUseError is returned by the store when a method to delete is used by alerts.
type InUseError struct {
	MethodID int64
	AlertIDs []int64
}

func (e *InUseError) Error() string {
	ids := make([]string, len(e.AlertIDs))
	for i, id := range e.AlertIDs {
		ids[i] = fmt.Sprint(id)
	}
	what, them := "alert", "it"
	if len(ids) > 1 {
		what, them = "alerts", "them"
	}
	return fmt.Sprintf("alert method %d is used by %s %s; delete %s or move %s to another method first",
		e.MethodID, what, strings.Join(ids, ", "), them, them)
}

// AlertOptions configure alerts: the most one user keeps (DefaultMaxAlertsPerUser when 0),
// whether webhooks may be plain http:// (a local stack's receivers), and the chains an alert
// may name (every chain when nil).
type AlertOptions struct {
	MaxPerUser int
	AllowHTTP  bool
	Chains     *chains.Set
}

// alerts is the resolved AlertOptions.
type alerts struct {
	max       int
	allowHTTP bool
	chains    *chains.Set
}

// WithAlerts sets the alerts' options.
func WithAlerts(o AlertOptions) Option {
	return func(s *Service) {
		if o.MaxPerUser > 0 {
			s.alerts.max = o.MaxPerUser
		}
		s.alerts.allowHTTP = o.AllowHTTP
		if o.Chains != nil {
			s.alerts.chains = o.Chains
		}
	}
}

func defaultAlerts() alerts {
	all, _ := chains.NewSet(nil) // every chain of the catalogue: cannot fail
	return alerts{max: DefaultMaxAlertsPerUser, chains: all}
}

func alertNotFound(id int64) error { return httpx.NotFound("no alert %d", id) }

func methodNotFound(id int64) error { return httpx.NotFound("no alert method %d", id) }

// alertErr turns the store's errors about an alert into the caller's 404 and 400s.
func alertErr(id, methodID int64, err error) error {
	var oe *OwnerLimitError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound):
		return alertNotFound(id)
	case errors.Is(err, ErrNoAlertMethod):
		return httpx.BadRequest("alertMethodId: %d is not one of your alert methods (GET /user/alert_methods lists them)", methodID)
	case errors.As(err, &oe):
		return httpx.BadRequest("%s", oe.Error())
	default:
		return fmt.Errorf("alert %d: %w", id, err)
	}
}

// Alerts lists the user's alerts by id.
func (s *Service) Alerts(ctx context.Context, user string) ([]Alert, error) {
	as, err := s.store.Alerts(ctx, user)
	if err != nil {
		return nil, fmt.Errorf("list alerts: %w", err)
	}
	return as, nil
}

// Alert returns the user's alert id.
func (s *Service) Alert(ctx context.Context, user string, id int64) (Alert, error) {
	a, err := s.store.Alert(ctx, user, id)
	return a, alertErr(id, 0, err)
}

// CreateAlert validates b and stores it, returning the new alert's id.
func (s *Service) CreateAlert(ctx context.Context, user string, b AlertBody) (int64, error) {
	in, err := s.ValidateAlert(b)
	if err != nil {
		return 0, err
	}
	id, err := s.store.CreateAlert(ctx, user, in, s.alerts.max)
	return id, alertErr(0, in.MethodID, err)
}

// ReplaceAlert validates b and overwrites the user's alert id with it.
func (s *Service) ReplaceAlert(ctx context.Context, user string, id int64, b AlertBody) error {
	in, err := s.ValidateAlert(b)
	if err != nil {
		return err
	}
	return alertErr(id, in.MethodID, s.store.ReplaceAlert(ctx, user, id, in))
}

// DeleteAlert deletes the user's alert id.
func (s *Service) DeleteAlert(ctx context.Context, user string, id int64) error {
	return alertErr(id, 0, s.store.DeleteAlert(ctx, user, id))
}

// AlertMethods lists the user's delivery methods by id, without their secrets.
func (s *Service) AlertMethods(ctx context.Context, user string) ([]AlertMethod, error) {
	ms, err := s.store.AlertMethods(ctx, user)
	if err != nil {
		return nil, fmt.Errorf("list alert methods: %w", err)
	}
	return ms, nil
}

// CreateAlertMethod validates a webhook method and stores it with a new signing secret (32
// random bytes, hex), which the answer carries and no later read does.
func (s *Service) CreateAlertMethod(ctx context.Context, user string, b AlertMethodBody) (AlertMethod, error) {
	m, err := s.ValidateAlertMethod(b)
	if err != nil {
		return AlertMethod{}, err
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return AlertMethod{}, fmt.Errorf("alert method secret: %w", err)
	}
	m.Secret = hex.EncodeToString(secret[:])
	out, err := s.store.CreateAlertMethod(ctx, user, m, MaxAlertMethodsPerUser)
	if oe := (*OwnerLimitError)(nil); errors.As(err, &oe) {
		return AlertMethod{}, httpx.BadRequest("%s", oe.Error())
	}
	if err != nil {
		return AlertMethod{}, fmt.Errorf("create alert method: %w", err)
	}
	return out, nil
}

// DeleteAlertMethod deletes the user's method id unless an alert uses it (a 409 naming them).
func (s *Service) DeleteAlertMethod(ctx context.Context, user string, id int64) error {
	err := s.store.DeleteAlertMethod(ctx, user, id)
	var ue *InUseError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound):
		return methodNotFound(id)
	case errors.As(err, &ue):
		return &httpx.StatusError{Status: http.StatusConflict, Message: ue.Error()}
	default:
		return fmt.Errorf("delete alert method %d: %w", id, err)
	}
}

// AlertFeed returns every user's alerts with id > after, by id, at most limit (1 to
// MaxAlertFeedPage), with their methods' URLs and secrets: the deliverer's read.
func (s *Service) AlertFeed(ctx context.Context, after int64, limit int) ([]Alert, error) {
	if limit < 1 || limit > MaxAlertFeedPage {
		return nil, httpx.BadRequest("limit: must be 1 to %d (got %d)", MaxAlertFeedPage, limit)
	}
	as, err := s.store.AlertFeed(ctx, after, limit)
	if err != nil {
		return nil, fmt.Errorf("alert feed after %d: %w", after, err)
	}
	return as, nil
}

// AlertByID returns alert id, whoever owns it, with its method's URL and secret.
func (s *Service) AlertByID(ctx context.Context, id int64) (Alert, error) {
	a, err := s.store.AlertByID(ctx, id)
	return a, alertErr(id, 0, err)
}
