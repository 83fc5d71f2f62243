package store

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/user_alerts.sql
	userAlertsSQL string
	//go:embed sql/user_alert.sql
	userAlertSQL string
	//go:embed sql/feed_alerts.sql
	feedAlertsSQL string
	//go:embed sql/feed_alert.sql
	feedAlertSQL string
	//go:embed sql/insert_alert.sql
	insertAlertSQL string
	//go:embed sql/update_alert.sql
	updateAlertSQL string
	//go:embed sql/delete_alert.sql
	deleteAlertSQL string
	//go:embed sql/alert_count.sql
	alertCountSQL string
	//go:embed sql/alert_method_count.sql
	alertMethodCountSQL string
	//go:embed sql/share_alert_method.sql
	shareAlertMethodSQL string
	//go:embed sql/lock_alert_method.sql
	lockAlertMethodSQL string
	//go:embed sql/alerts_using_method.sql
	alertsUsingMethodSQL string
	//go:embed sql/delete_alert_method.sql
	deleteAlertMethodSQL string
	//go:embed sql/insert_alert_method.sql
	insertAlertMethodSQL string
	//go:embed sql/alert_methods.sql
	alertMethodsSQL string
)

// alertChange is the event of one alert's change.
func (s *Store) alertChange(user string, op eventsv1.UserChange_Op, id int64) *eventsv1.UserChange {
	return &eventsv1.UserChange{UserId: user, Kind: eventsv1.UserChange_KIND_ALERT, Op: op, AlertId: id, TimeMs: s.now().UnixMilli()}
}

// ownerRoom returns an *app.OwnerLimitError when the user, who keeps what countSQL counts, would
// keep more than max with one more. It locks the user's version row first (lock_owner.sql), so
// concurrent creations count one after another.
func ownerRoom(ctx context.Context, tx pgx.Tx, user, what, countSQL string, max int) error {
	if _, err := tx.Exec(ctx, lockOwnerSQL, user); err != nil {
		return err
	}
	var have int
	if err := tx.QueryRow(ctx, countSQL, user).Scan(&have); err != nil {
		return err
	}
	if have+1 > max {
		return &app.OwnerLimitError{What: what, Have: have, Adding: 1, Max: max}
	}
	return nil
}

// shareMethod locks the user's method id against deletion for the transaction:
// app.ErrNoAlertMethod when the user has no such method.
func shareMethod(ctx context.Context, tx pgx.Tx, user string, id int64) error {
	var got int64
	err := tx.QueryRow(ctx, shareAlertMethodSQL, id, user).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return app.ErrNoAlertMethod
	}
	return err
}

// alertArgs are in's columns in the order of insert_alert.sql's and update_alert.sql's $2..$16
// (an empty org id or tier is NULL).
func alertArgs(in app.AlertInput) []any {
	return []any{in.Name, in.Enabled, in.Base, in.From, in.To, in.Tokens, in.Chains,
		in.USDGte, in.USDLte, in.ValueGte, in.ValueLte, in.Description, in.MethodID,
		nullIfEmpty(in.OrgID), nullIfEmpty(in.Tier)}
}

func nullIfEmpty(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// CreateAlert stores in for user, unless the user would then keep more than max alerts (an
// *app.OwnerLimitError) or in.MethodID is none of the user's methods (app.ErrNoAlertMethod).
func (s *Store) CreateAlert(ctx context.Context, user string, in app.AlertInput, max int) (int64, error) {
	var id int64
	err := s.write(ctx, "create alert", func(tx pgx.Tx) (bool, error) {
		if err := ownerRoom(ctx, tx, user, "alerts", alertCountSQL, max); err != nil {
			return false, err
		}
		if err := shareMethod(ctx, tx, user, in.MethodID); err != nil {
			return false, err
		}
		if err := tx.QueryRow(ctx, insertAlertSQL, append([]any{user}, alertArgs(in)...)...).Scan(&id); err != nil {
			return false, err
		}
		return true, s.enqueue(ctx, tx, s.alertChange(user, eventsv1.UserChange_OP_UPSERT, id))
	})
	return id, err
}

// ReplaceAlert overwrites every field of the user's alert id.
func (s *Store) ReplaceAlert(ctx context.Context, user string, id int64, in app.AlertInput) error {
	return s.write(ctx, "replace alert", func(tx pgx.Tx) (bool, error) {
		if err := shareMethod(ctx, tx, user, in.MethodID); err != nil {
			return false, err
		}
		var got int64
		args := append(append([]any{user}, alertArgs(in)...), id)
		if err := tx.QueryRow(ctx, updateAlertSQL, args...).Scan(&got); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return false, app.ErrNotFound
			}
			return false, err
		}
		return true, s.enqueue(ctx, tx, s.alertChange(user, eventsv1.UserChange_OP_UPSERT, id))
	})
}

// DeleteAlert deletes the user's alert id.
func (s *Store) DeleteAlert(ctx context.Context, user string, id int64) error {
	return s.write(ctx, "delete alert", func(tx pgx.Tx) (bool, error) {
		var got int64
		if err := tx.QueryRow(ctx, deleteAlertSQL, id, user).Scan(&got); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return false, app.ErrNotFound
			}
			return false, err
		}
		return true, s.enqueue(ctx, tx, s.alertChange(user, eventsv1.UserChange_OP_DELETE, id))
	})
}

// scanAlert reads one row of the alert statements (user_alerts.sql's columns).
func scanAlert(row pgx.Row) (app.Alert, error) {
	var a app.Alert
	var org, tier *string
	m := &a.Method
	err := row.Scan(&a.ID, &a.Owner, &a.Name, &a.Enabled, &a.Base, &a.From, &a.To, &a.Tokens, &a.Chains,
		&a.USDGte, &a.USDLte, &a.ValueGte, &a.ValueLte, &a.Description, &a.CreatedAt, &a.UpdatedAt,
		&org, &tier, &m.ID, &m.Kind, &m.URL, &m.Secret)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, app.ErrNotFound
	}
	if org != nil {
		a.OrgID = *org
	}
	if tier != nil {
		a.Tier = *tier
	}
	a.MethodID = m.ID
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return a, err
}

func (s *Store) alerts(ctx context.Context, what, sql string, args ...any) ([]app.Alert, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.Alert, error) { return scanAlert(r) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if out == nil {
		out = []app.Alert{}
	}
	return out, nil
}

// Alerts lists the user's alerts by id.
func (s *Store) Alerts(ctx context.Context, user string) ([]app.Alert, error) {
	return s.alerts(ctx, "list alerts", userAlertsSQL, user)
}

// Alert reads the user's alert id.
func (s *Store) Alert(ctx context.Context, user string, id int64) (app.Alert, error) {
	return scanAlert(s.pool.QueryRow(ctx, userAlertSQL, id, user))
}

// AlertFeed returns every user's alerts with id > after, by id, at most limit.
func (s *Store) AlertFeed(ctx context.Context, after int64, limit int) ([]app.Alert, error) {
	return s.alerts(ctx, "alert feed", feedAlertsSQL, after, limit)
}

// AlertByID reads alert id, whoever owns it.
func (s *Store) AlertByID(ctx context.Context, id int64) (app.Alert, error) {
	return scanAlert(s.pool.QueryRow(ctx, feedAlertSQL, id))
}

// CreateAlertMethod stores m for user unless the user would then keep more than max methods.
func (s *Store) CreateAlertMethod(ctx context.Context, user string, m app.AlertMethod, max int) (app.AlertMethod, error) {
	err := s.write(ctx, "create alert method", func(tx pgx.Tx) (bool, error) {
		if err := ownerRoom(ctx, tx, user, "alert methods", alertMethodCountSQL, max); err != nil {
			return false, err
		}
		err := tx.QueryRow(ctx, insertAlertMethodSQL, user, m.Kind, m.URL, m.Description, m.Secret).Scan(&m.ID, &m.CreatedAt)
		m.CreatedAt = m.CreatedAt.UTC()
		return false, err
	})
	return m, err
}

// AlertMethods lists the user's methods by id, without secrets.
func (s *Store) AlertMethods(ctx context.Context, user string) ([]app.AlertMethod, error) {
	rows, err := s.pool.Query(ctx, alertMethodsSQL, user)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.AlertMethod, error) {
		var m app.AlertMethod
		err := r.Scan(&m.ID, &m.Kind, &m.URL, &m.Description, &m.CreatedAt)
		m.CreatedAt = m.CreatedAt.UTC()
		return m, err
	})
	if out == nil && err == nil {
		out = []app.AlertMethod{}
	}
	return out, err
}

// DeleteAlertMethod deletes the user's method id unless alerts use it (an *app.InUseError). The
// method row is locked first, so no alert can start using it before it is gone.
func (s *Store) DeleteAlertMethod(ctx context.Context, user string, id int64) error {
	return s.write(ctx, "delete alert method", func(tx pgx.Tx) (bool, error) {
		var got int64
		if err := tx.QueryRow(ctx, lockAlertMethodSQL, id, user).Scan(&got); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return false, app.ErrNotFound
			}
			return false, err
		}
		rows, err := tx.Query(ctx, alertsUsingMethodSQL, id)
		if err != nil {
			return false, err
		}
		using, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return false, err
		}
		if len(using) > 0 {
			return false, &app.InUseError{MethodID: id, AlertIDs: using}
		}
		_, err = tx.Exec(ctx, deleteAlertMethodSQL, id)
		return false, err
	})
}
