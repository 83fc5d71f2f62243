// Package alerts delivers the callers' alert rules (/user/alerts, owned by user-labels) to their
// webhooks: it loads every alert at start and keeps them current from user.changes.v1 and a
// periodic reload, compiles each enabled one into the stream's filter engine as its owner's
// subscribe would be, matches the transfers a consumer group hands this replica against them,
// renders each match as the stream does, and POSTs them, signed, at least once.
package alerts

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/lifecycle"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/orphans"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/ws"
	"go.opentelemetry.io/otel/metric"
)

// Route is the route pattern webhook deliveries are metered under (usage.calls.v1).
const Route = "/user/alerts/webhook"

// pageSize is how many alerts one read of GET /internal/alerts asks for.
const pageSize = 1000

// Options configure a Deliverer.
type Options struct {
	Source Source
	// Labels reads an owner's user entities and additions (to resolve what an alert names) and
	// book (to render a delivery with the owner's labels).
	Labels ws.Labels
	Engine *engine.Engine
	// Orphans are the orphaned blocks (nil: none): a transfer of one known before it is
	// matched is not delivered.
	Orphans *orphans.Set
	Meter   *ws.Meter
	Served  *chains.Set
	// Reload is how often every alert is read again; RetryWindow how long a batch's deliveries
	// are retried before they are given up; Cooldown how long a webhook is not POSTed to after
	// one of its deliveries was given up (default 5 minutes).
	Reload, RetryWindow, Cooldown time.Duration
	// AllowPrivate lets webhooks connect to loopback, private, link-local, unspecified and
	// multicast addresses.
	AllowPrivate bool
	// Ready is closed once the engine's read model and the orphaned blocks are loaded: no alert
	// is compiled before (its names would be checked against a partial read model).
	Ready <-chan struct{}
	// Quota bounds the transfers each owner's alerts deliver in an hour and a month (nil: unbounded).
	Quota Quota
	// Suspensions share the webhooks suspended after a failure between the replicas (nil: each
	// replica knows its own).
	Suspensions Suspensions
	// TierQuota is a tier's stream quota (0: none), which bounds its owners' alerts too, below
	// Quota's own limits (nil: Quota's alone).
	TierQuota func(tier string) store.Limits
	// CreditsSpent reports whether an identity's tier has a hard credit limit its billed entity
	// has spent (ws.Hub.CreditsSpent): an alert of such an owner delivers nothing (nil: not
	// checked).
	CreditsSpent func(ctx context.Context, id ws.Identity) (bool, error)
	// Sent records the transfers each alert delivered, so neither a batch read again after a
	// stop nor a transfer published twice sends (or charges) one again (nil: not recorded).
	Sent Sent
	// Metrics is where the deliverer's instruments are created (nil: none).
	Metrics metric.Meter
	Log     *slog.Logger
	Now     func() time.Time
}

// Quota counts the transfers an owner's alerts deliver per hour and month (store.AlertQuota).
type Quota interface {
	// Admit counts up to n of owner's hour and month at at, under the quota's limits and
	// tier's (0: none), and returns how many may be delivered and, when fewer than n, the limit
	// that refused the rest (hourly_limit or monthly_limit).
	Admit(ctx context.Context, owner string, at time.Time, n int64, tier store.Limits) (int64, string, error)
	// Return gives back n taken and not delivered.
	Return(ctx context.Context, owner string, at time.Time, n int64) error
}

// Sent records which transfers each alert delivered (store.AlertSent), by an identity of each
// in its block.
type Sent interface {
	// Sent reports, for each of ids, whether alert delivered it (within the time kept).
	Sent(ctx context.Context, alert int64, ids []string, now time.Time) ([]bool, error)
	// Record records that alert delivered ids at now.
	Record(ctx context.Context, alert int64, ids []string, now time.Time) error
}

// Suspensions are the webhooks (by alert method id) not POSTed to for a while, shared by the
// replicas (store.AlertSuspensions).
type Suspensions interface {
	// Suspend suspends method for d from now.
	Suspend(ctx context.Context, method int64, d time.Duration) error
	// Suspended is how long method stays suspended (0: it is not).
	Suspended(ctx context.Context, method int64) (time.Duration, error)
}

// Deliverer holds the alerts, matches transfers against them and delivers the matches. Run keeps
// the alerts; Handle is the transfer consumer's handler. Safe for concurrent use.
type Deliverer struct {
	o     Options
	comp  compiler
	set   *engine.Set
	http  *http.Client
	m     *instruments
	books *books

	loaded   chan struct{}
	stopping chan struct{}

	mu    sync.Mutex
	rules map[int64]*rule
	// changed are the alerts to read again; owners those whose alerts are to be compiled again
	// (an entity of theirs changed). wake tells Run.
	changed map[int64]struct{}
	owners  map[string]struct{}
	wake    chan struct{}

	// limited are the owners told (logged) they reached the hour's quota, and the hour.
	limitedMu   sync.Mutex
	limited     map[string]bool
	limitedHour time.Time

	// suspendedUntil holds the webhooks (by method id) not POSTed to until then.
	suspendMu      sync.Mutex
	suspendedUntil map[int64]time.Time
}

// New returns a deliverer; Run starts keeping its alerts.
func New(o Options) (*Deliverer, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Cooldown <= 0 {
		o.Cooldown = 5 * time.Minute
	}
	d := &Deliverer{suspendedUntil: map[int64]time.Time{}, o: o, comp: compiler{labels: o.Labels, eng: o.Engine, served: o.Served}, set: engine.NewSet(),
		http: newWebhookClient(o.AllowPrivate), books: newBooks(o.Labels, o.Log), loaded: make(chan struct{}),
		stopping: make(chan struct{}), rules: map[int64]*rule{}, changed: map[int64]struct{}{}, owners: map[string]struct{}{},
		wake: make(chan struct{}, 1)}
	m, err := newInstruments(o.Metrics, d.states)
	if err != nil {
		return nil, err
	}
	d.m = m
	return d, nil
}

func (d *Deliverer) now() time.Time { return d.o.Now() }

// Loaded is closed once every alert has been read and compiled the first time: the transfer
// consumer starts then.
func (d *Deliverer) Loaded() <-chan struct{} { return d.loaded }

// Run loads every alert once the read model is ready, retrying until user-labels answers, then
// applies the changes announced (UserChanged) and reloads every Reload until ctx ends. When it
// returns, deliveries being retried are abandoned (their batch is not committed: it is read again).
func (d *Deliverer) Run(ctx context.Context) error {
	defer close(d.stopping)
	select {
	case <-d.o.Ready:
	case <-ctx.Done():
		return nil
	}
	for wait := time.Second; !d.reload(ctx); wait = min(2*wait, 30*time.Second) {
		if !lifecycle.Sleep(ctx, wait) {
			return nil
		}
	}
	close(d.loaded)
	t := time.NewTicker(d.o.Reload)
	defer t.Stop()
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			d.reload(ctx)
		case <-d.wake:
			if !d.applyChanges(ctx) {
				retry = time.After(2 * time.Second)
			}
		case <-retry:
			retry = nil
			d.signal()
		}
	}
}

// signal wakes Run.
func (d *Deliverer) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// UserChanged takes a change user-labels announced on user.changes.v1 for user: an alert
// changed (read again; gone when user-labels no longer has it), or an entity of the user's
// changed (the user's alerts are compiled again, so they match the addresses it holds now).
// Any change drops the user's cached labels. It returns at once.
func (d *Deliverer) UserChanged(user string, ch *eventsv1.UserChange) {
	d.books.forget(user)
	d.mu.Lock()
	switch ch.GetKind() {
	case eventsv1.UserChange_KIND_ALERT:
		if ch.GetAlertId() > 0 {
			d.changed[ch.GetAlertId()] = struct{}{}
		}
	case eventsv1.UserChange_KIND_ENTITY, eventsv1.UserChange_KIND_ENTITY_ADDITIONS:
		d.owners[user] = struct{}{}
	default:
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	d.signal()
}

// applyChanges reads again the alerts announced changed and compiles again the alerts of the
// owners whose entities changed; false when some failed on user-labels (they stay pending).
func (d *Deliverer) applyChanges(ctx context.Context) bool {
	d.mu.Lock()
	ids, owners := d.changed, d.owners
	d.changed, d.owners = map[int64]struct{}{}, map[string]struct{}{}
	d.mu.Unlock()
	ok := true
	for id := range ids {
		a, err := d.o.Source.Alert(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			d.remove(ctx, id)
		case err != nil:
			if ctx.Err() == nil {
				d.o.Log.Warn("a changed alert could not be read from user-labels; retrying", "alert", id, "error", err)
			}
			d.mu.Lock()
			d.changed[id] = struct{}{}
			d.mu.Unlock()
			ok = false
		default:
			d.put(ctx, a, false)
		}
	}
	for owner := range owners {
		for _, a := range d.alertsOf(owner) {
			d.put(ctx, a, true)
		}
	}
	return ok
}

// alertsOf is owner's alerts as held.
func (d *Deliverer) alertsOf(owner string) []Alert {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Alert
	for _, r := range d.rules {
		if r.alert.Owner == owner {
			out = append(out, r.alert)
		}
	}
	return out
}

// reload reads every alert and applies what changed since they were last read: new and
// changed ones compiled, those gone removed, those whose compile failed on user-labels compiled
// again. False when the read failed (nothing is changed then).
func (d *Deliverer) reload(ctx context.Context) bool {
	var all []Alert
	for after := int64(0); ; {
		page, err := d.o.Source.Alerts(ctx, after, pageSize)
		if err != nil {
			if ctx.Err() == nil {
				d.o.Log.Warn("the alerts could not be read from user-labels; retrying", "error", err)
			}
			return false
		}
		all = append(all, page...)
		if len(page) < pageSize {
			break
		}
		after = page[len(page)-1].ID
	}
	seen := make(map[int64]bool, len(all))
	for _, a := range all {
		seen[a.ID] = true
		d.put(ctx, a, false)
	}
	d.mu.Lock()
	var gone []int64
	for id := range d.rules {
		if !seen[id] {
			gone = append(gone, id)
		}
	}
	d.mu.Unlock()
	for _, id := range gone {
		d.remove(ctx, id)
	}
	return true
}

// put takes alert a as user-labels holds it now: compiled and matched when enabled and valid,
// matching nothing otherwise. An alert unchanged since it was compiled is left as it is unless
// force (its owner's entities changed), its compile failed on user-labels, or it was invalid
// (what it names may exist now: an entity attributed since).
func (d *Deliverer) put(ctx context.Context, a Alert, force bool) {
	d.mu.Lock()
	old := d.rules[a.ID]
	d.mu.Unlock()
	same := old != nil && reflect.DeepEqual(old.alert, a)
	if !force && same && !old.retry && old.state != stateInvalid {
		return
	}
	r := &rule{alert: a, state: stateDisabled}
	var f *engine.Filter
	if a.Enabled {
		var err error
		f, err = d.comp.compile(ctx, a)
		var inv *invalidError
		switch {
		case errors.As(err, &inv):
			r.state = stateInvalid
			if same && old.state == stateInvalid {
				break // counted and logged when it was found invalid
			}
			d.m.invalid(ctx, inv.reason)
			d.o.Log.Warn("an alert matches nothing: it is not a valid filter or names what does not exist for its owner",
				"alert", a.ID, "owner", a.Owner, "reason", inv.reason, "error", inv.err)
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			d.o.Log.Warn("an alert could not be compiled (user-labels failed); it is compiled again at the next reload",
				"alert", a.ID, "owner", a.Owner, "error", err)
			if old != nil && old.state == stateActive && old.alert.Owner == a.Owner {
				// It keeps matching as before rather than stop while user-labels is away.
				d.mu.Lock()
				old.retry = true
				d.mu.Unlock()
				return
			}
			r.state, r.retry = statePending, true
		default:
			r.state = stateActive
		}
	}
	d.mu.Lock()
	d.rules[a.ID] = r
	d.mu.Unlock()
	id := strconv.FormatInt(a.ID, 10)
	d.o.Engine.Do(ctx, func() {
		if f != nil {
			d.set.Put(f)
		} else {
			d.set.Remove(id)
		}
	})
}

// remove forgets alert id (deleted).
func (d *Deliverer) remove(ctx context.Context, id int64) {
	d.mu.Lock()
	delete(d.rules, id)
	d.mu.Unlock()
	d.o.Engine.Do(ctx, func() { d.set.Remove(strconv.FormatInt(id, 10)) })
}

// states counts the alerts held by state.
func (d *Deliverer) states() map[string]int64 {
	out := map[string]int64{stateActive: 0, stateDisabled: 0, stateInvalid: 0, statePending: 0}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.rules {
		out[r.state]++
	}
	return out
}

// rule returns the rule of alert id when it is active (nil otherwise).
func (d *Deliverer) active(id int64) *rule {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r := d.rules[id]; r != nil && r.state == stateActive {
		return r
	}
	return nil
}

// Consumer is the transfer consumer's options: the alerts' group on chain.transfers.v1, a
// handler call long enough for a batch's deliveries to be retried through the window.
func (d *Deliverer) Consumer(o *eventbus.ConsumerOptions) {
	o.HandlerTimeout = d.o.RetryWindow + 2*postTimeout + time.Minute
}
