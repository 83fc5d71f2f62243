// Package usage is the edge's metering store: hourly rollups of calls and credits per key (with
// the key's user and org), billing periods per billed entity, and the event ids already counted
// so that aggregation is idempotent under at-least-once delivery.
package usage

import (
	"context"
	_ "embed"
	"fmt"
	"sort"
	"time"

	"github.com/chainintel/chainintel/services/edge/ledger"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Entity types that own billing periods (ledger's: the live ledger in Redis names its hashes
// by them).
const (
	EntityOrg  = ledger.EntityOrg
	EntityUser = ledger.EntityUser
)

// Entity is who a call is billed to: the caller's org, or the caller for individuals.
type Entity = ledger.Entity

// BilledEntity returns the entity billed for a caller.
func BilledEntity(userID, orgID string) Entity { return ledger.BilledEntity(userID, orgID) }

// PeriodOf returns the billing period containing t: the calendar month, UTC.
func PeriodOf(t time.Time) (start, end time.Time) { return ledger.PeriodOf(t) }

// Call is one metered call (or delivered stream transfer) to aggregate.
type Call struct {
	EventID string
	KeyID   string
	UserID  string
	OrgID   string
	Route   string // route pattern
	Credits int64
	Time    time.Time
	// Included is the credits included per period by the caller's tier; a period keeps the
	// largest value seen (an upgrade mid-period raises it).
	Included int64
}

// Store reads and writes the metering tables.
type Store struct{ pool *pgxpool.Pool }

// NewStore returns a store over pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

type hourKey struct {
	keyID string
	hour  time.Time
	route string
}

type hourVal struct {
	userID, orgID  string
	calls, credits int64
}

type periodKey struct {
	e     Entity
	start time.Time
}

type periodVal struct {
	end                     time.Time
	included, used, through int64
}

// Apply aggregates calls whose event ids were not counted before, in one transaction, and
// returns those it counted. Replaying a call (same event id) changes nothing.
func (s *Store) Apply(ctx context.Context, calls []Call) ([]Call, error) {
	if len(calls) == 0 {
		return nil, nil
	}
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.EventID
	}
	var fresh []Call
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `INSERT INTO edge.usage_events (event_id) SELECT unnest($1::text[])
			ON CONFLICT DO NOTHING RETURNING event_id`, ids)
		if err != nil {
			return err
		}
		newIDs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		isNew := make(map[string]bool, len(newIDs))
		for _, id := range newIDs {
			isNew[id] = true
		}
		hours := map[hourKey]*hourVal{}
		periods := map[periodKey]*periodVal{}
		for _, c := range calls {
			if !isNew[c.EventID] {
				continue
			}
			isNew[c.EventID] = false // a duplicate within the batch counts once
			fresh = append(fresh, c)
			hk := hourKey{c.KeyID, c.Time.UTC().Truncate(time.Hour), c.Route}
			h := hours[hk]
			if h == nil {
				h = &hourVal{userID: c.UserID, orgID: c.OrgID}
				hours[hk] = h
			}
			h.calls++
			h.credits += c.Credits
			start, end := PeriodOf(c.Time)
			pk := periodKey{BilledEntity(c.UserID, c.OrgID), start}
			p := periods[pk]
			if p == nil {
				p = &periodVal{end: end}
				periods[pk] = p
			}
			p.used += c.Credits
			p.included = max(p.included, c.Included)
			p.through = max(p.through, c.Time.UnixMilli())
		}
		if len(fresh) == 0 {
			return nil
		}
		if err := upsertHours(ctx, tx, hours); err != nil {
			return err
		}
		return upsertPeriods(ctx, tx, periods)
	})
	if err != nil {
		return nil, fmt.Errorf("aggregate %d usage events: %w", len(calls), err)
	}
	return fresh, nil
}

func upsertHours(ctx context.Context, tx pgx.Tx, hours map[hourKey]*hourVal) error {
	ks := make([]hourKey, 0, len(hours))
	for k := range hours {
		ks = append(ks, k)
	}
	// A stable order keeps concurrent consumers from deadlocking on each other's rows.
	sort.Slice(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		if a.keyID != b.keyID {
			return a.keyID < b.keyID
		}
		if !a.hour.Equal(b.hour) {
			return a.hour.Before(b.hour)
		}
		return a.route < b.route
	})
	n := len(ks)
	keyIDs, routes, users, orgs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	hrs := make([]time.Time, n)
	calls, credits := make([]int64, n), make([]int64, n)
	for i, k := range ks {
		v := hours[k]
		keyIDs[i], hrs[i], routes[i], users[i], orgs[i], calls[i], credits[i] = k.keyID, k.hour, k.route, v.userID, v.orgID, v.calls, v.credits
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO edge.usage_hourly (key_id, hour, route, user_id, org_id, calls, credits)
		SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[])
		ON CONFLICT (key_id, hour, route) DO UPDATE
		SET calls = usage_hourly.calls + EXCLUDED.calls, credits = usage_hourly.credits + EXCLUDED.credits`,
		keyIDs, hrs, routes, users, orgs, calls, credits)
	if err != nil {
		return fmt.Errorf("hourly rollups: %w", err)
	}
	return nil
}

func upsertPeriods(ctx context.Context, tx pgx.Tx, periods map[periodKey]*periodVal) error {
	ks := make([]periodKey, 0, len(periods))
	for k := range periods {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		if a.e != b.e {
			return a.e.Type+a.e.ID < b.e.Type+b.e.ID
		}
		return a.start.Before(b.start)
	})
	n := len(ks)
	types, ids := make([]string, n), make([]string, n)
	starts, ends := make([]time.Time, n), make([]time.Time, n)
	included, used, through := make([]int64, n), make([]int64, n), make([]int64, n)
	for i, k := range ks {
		v := periods[k]
		types[i], ids[i], starts[i], ends[i] = k.e.Type, k.e.ID, k.start, v.end
		included[i], used[i], through[i] = v.included, v.used, v.through
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO edge.credit_periods (entity_type, entity_id, period_start, period_end, credits_included, credits_used, through_ms, computed_at)
		SELECT t, i, s, e, inc, u, th, now() FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::bigint[], $6::bigint[], $7::bigint[]) AS x(t, i, s, e, inc, u, th)
		ON CONFLICT (entity_type, entity_id, period_start) DO UPDATE
		SET credits_used = credit_periods.credits_used + EXCLUDED.credits_used,
		    credits_included = GREATEST(credit_periods.credits_included, EXCLUDED.credits_included),
		    through_ms = GREATEST(credit_periods.through_ms, EXCLUDED.through_ms),
		    computed_at = now()`,
		types, ids, starts, ends, included, used, through)
	if err != nil {
		return fmt.Errorf("credit periods: %w", err)
	}
	return nil
}

// Period is one billing period of an entity.
type Period struct {
	Entity     Entity
	Start, End time.Time
	Included   int64
	Used       int64
	ComputedAt time.Time
}

// CreditPeriods returns an entity's newest periods, newest first, at most limit.
func (s *Store) CreditPeriods(ctx context.Context, e Entity, limit int) ([]Period, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT period_start, period_end, credits_included, credits_used, computed_at FROM edge.credit_periods
		WHERE entity_type = $1 AND entity_id = $2 ORDER BY period_start DESC LIMIT $3`, e.Type, e.ID, limit)
	if err != nil {
		return nil, fmt.Errorf("credit periods of %s %s: %w", e.Type, e.ID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Period, error) {
		p := Period{Entity: e}
		return p, r.Scan(&p.Start, &p.End, &p.Included, &p.Used, &p.ComputedAt)
	})
	if err != nil {
		return nil, fmt.Errorf("credit periods of %s %s: %w", e.Type, e.ID, err)
	}
	return out, nil
}

// Total is what a billing period has counted, read in one snapshot: the credits used, and the
// latest call time (ms) among the calls counted (no call after it is in Used).
type Total struct {
	Used, ThroughMs int64
}

// PeriodTotal returns the total counted so far in the period of e starting at start (zero when
// nothing was).
func (s *Store) PeriodTotal(ctx context.Context, e Entity, start time.Time) (Total, error) {
	ts, err := s.PeriodTotals(ctx, []PeriodRef{{Entity: e, Start: start}})
	if err != nil {
		return Total{}, fmt.Errorf("credits used by %s %s: %w", e.Type, e.ID, err)
	}
	return ts[0], nil
}

// PeriodTotals returns the total counted so far in each period (in the order of periods; zero
// for a period that counted nothing), all read in one statement and so one snapshot.
func (s *Store) PeriodTotals(ctx context.Context, periods []PeriodRef) ([]Total, error) {
	totals, _, err := s.counted(ctx, periods, nil)
	if err != nil {
		return nil, fmt.Errorf("period totals: %w", err)
	}
	return totals, nil
}

// PeriodRef names one billed entity's billing period.
type PeriodRef struct {
	Entity Entity
	Start  time.Time
}

// countedSQL reads, in one statement, the totals of periods and which event ids were counted.
//
//go:embed sql/counted.sql
var countedSQL string

// Counted returns, read together, the total counted so far in each period (in the order of
// periods) and which of ids were counted: every counted id's credits are in its period's
// total, and no other id's are.
func (s *Store) Counted(ctx context.Context, periods []PeriodRef, ids []string) ([]Total, map[string]bool, error) {
	totals, counted, err := s.counted(ctx, periods, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("counted events of %d periods: %w", len(periods), err)
	}
	return totals, counted, nil
}

func (s *Store) counted(ctx context.Context, periods []PeriodRef, ids []string) ([]Total, map[string]bool, error) {
	types, entities, starts := make([]string, len(periods)), make([]string, len(periods)), make([]time.Time, len(periods))
	for i, p := range periods {
		types[i], entities[i], starts[i] = p.Entity.Type, p.Entity.ID, p.Start
	}
	rows, err := s.pool.Query(ctx, countedSQL, types, entities, starts, ids)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	totals, counted := make([]Total, len(periods)), map[string]bool{}
	for rows.Next() {
		var kind, i int64
		var t Total
		var id string
		if err := rows.Scan(&kind, &i, &t.Used, &t.ThroughMs, &id); err != nil {
			return nil, nil, err
		}
		switch {
		case kind == 1:
			counted[id] = true
		case i >= 1 && int(i) <= len(totals):
			totals[i-1] = t
		}
	}
	return totals, counted, rows.Err()
}

// Scope selects whose calls a report covers.
type Scope struct {
	OrgID  string // the whole org when set
	UserID string // else this user
}

// HourRoute is the calls and credits of one route pattern in one hour.
type HourRoute struct {
	Hour    time.Time
	Route   string
	Calls   int64
	Credits int64
}

// Hourly returns the scope's calls and credits per hour and route with from <= hour < to,
// ordered by hour then route.
func (s *Store) Hourly(ctx context.Context, sc Scope, from, to time.Time) ([]HourRoute, error) {
	col, id := "user_id", sc.UserID
	if sc.OrgID != "" {
		col, id = "org_id", sc.OrgID
	}
	rows, err := s.pool.Query(ctx, `
		SELECT hour, route, sum(calls)::bigint, sum(credits)::bigint FROM edge.usage_hourly
		WHERE `+col+` = $1 AND hour >= $2 AND hour < $3
		GROUP BY hour, route ORDER BY hour, route`, id, from, to)
	if err != nil {
		return nil, fmt.Errorf("hourly usage: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (HourRoute, error) {
		var h HourRoute
		return h, r.Scan(&h.Hour, &h.Route, &h.Calls, &h.Credits)
	})
	if err != nil {
		return nil, fmt.Errorf("hourly usage: %w", err)
	}
	return out, nil
}

// PruneHourlyBefore deletes hourly usage rows of hours before t, batch rows at a time so that no
// statement holds many row locks or a long transaction; it returns how many it deleted. Billing
// periods (credit_periods) are kept: they are what credits are charged from.
func (s *Store) PruneHourlyBefore(ctx context.Context, t time.Time, batch int) (int64, error) {
	var total int64
	for {
		tag, err := s.pool.Exec(ctx, `DELETE FROM edge.usage_hourly WHERE ctid = ANY(ARRAY(
			SELECT ctid FROM edge.usage_hourly WHERE hour < $1 LIMIT $2))`, t, batch)
		if err != nil {
			return total, fmt.Errorf("prune hourly usage: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(batch) {
			return total, nil
		}
	}
}

// ForgetEventsBefore drops remembered event ids older than t (redelivery after that is not
// expected); it returns how many it dropped.
func (s *Store) ForgetEventsBefore(ctx context.Context, t time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM edge.usage_events WHERE seen_at < $1`, t)
	if err != nil {
		return 0, fmt.Errorf("forget usage events: %w", err)
	}
	return tag.RowsAffected(), nil
}
