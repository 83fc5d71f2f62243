package alerts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/ws"
)

// Bounds of a batch's deliveries.
const (
	// maxPerPost is the most transfers one POST carries: an alert matching more in a batch is
	// sent several POSTs, each a delivery of its own.
	maxPerPost = 100
	// parallel is how many deliveries of a batch are sent at once, and perMethod how many of
	// them to one webhook: a slow webhook holds perMethod of them, not the others.
	parallel  = 32
	perMethod = 4
	// firstRetry and maxRetryWait are the backoff between a delivery's attempts.
	firstRetry   = 500 * time.Millisecond
	maxRetryWait = 30 * time.Second
)

// errInterrupted is a batch whose deliveries were cut by the replica stopping: it is not
// committed, so the group reads it again (the receiver dedupes on the delivery id).
var errInterrupted = errors.New("deliveries interrupted by a stop; the batch is read again")

// delivery is one POST owed to one alert: up to maxPerPost of the transfers it matched, in the
// order of their partition.
type delivery struct {
	r  *rule
	rs []*engine.Rendered
}

// Body is the JSON a webhook is POSTed.
type Body struct {
	AlertID    int64             `json:"alertId"`
	AlertName  string            `json:"alertName"`
	DeliveryID string            `json:"deliveryId"`
	Transfers  []json.RawMessage `json:"transfers"`
}

// Handle is the consumer's handler for a batch of chain.transfers.v1: it matches the batch
// against the active alerts and delivers every match, returning once each delivery succeeded
// or was given up on, so the batch's offsets are committed only then. It returns an error
// (the batch is handled again) only when the replica stops before its deliveries end.
func (d *Deliverer) Handle(ctx context.Context, batch []eventbus.Message[*eventsv1.Transfer]) error {
	select {
	case <-d.stopping:
		return errInterrupted // a batch fetched while the replica stops is left to the next
	default:
	}
	recs := make([]engine.Record, 0, len(batch))
	seen := make(map[[3]string]struct{}, len(batch))
	for _, m := range batch {
		if m.Tombstone {
			continue
		}
		if err := render.Normalize(m.Msg); err != nil {
			d.o.Log.Warn("alerts: skipping malformed transfer", "partition", m.Partition, "offset", m.Offset, "error", err)
			continue
		}
		// A copy in the same batch (ingest published its round again) is matched once; a
		// copy in a later batch is found delivered by unsent.
		k := [3]string{m.Msg.GetChain(), m.Msg.GetId(), m.Msg.GetBlockHash()}
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		recs = append(recs, engine.Record{Part: m.Partition, Off: m.Offset, Time: m.Time, Msg: m.Msg})
	}
	if len(recs) == 0 {
		return nil
	}
	d.settle(ctx, recs)
	var matches []engine.Match
	if !d.o.Engine.Do(ctx, func() { matches = d.o.Engine.MatchSet(d.set, recs) }) {
		return ctx.Err()
	}
	return d.deliverAll(ctx, d.deliveries(matches))
}

// settle has the reorgs written before recs applied when one of them is of a block marked
// orphaned, so the engine decides on it without waiting (as a resume's catch-up does).
func (d *Deliverer) settle(ctx context.Context, recs []engine.Record) {
	o := d.o.Orphans
	if o == nil || o.Len() == 0 {
		return
	}
	upTo := map[int]int64{}
	for _, r := range recs {
		upTo[r.Part] = max(upTo[r.Part], r.Off+1)
	}
	for _, r := range recs {
		if o.Orphaned(r.Msg.GetChain(), r.Msg.GetBlockHash()) {
			o.Settle(ctx, upTo)
			return
		}
	}
}

// deliveries groups matches by alert, in order, in POSTs of at most maxPerPost transfers; an
// alert no longer active (disabled or deleted since) gets none.
func (d *Deliverer) deliveries(matches []engine.Match) []*delivery {
	byAlert := map[int64][]*engine.Rendered{}
	var order []int64
	for _, m := range matches {
		for _, id := range m.IDs {
			n, _ := strconv.ParseInt(id, 10, 64)
			if _, ok := byAlert[n]; !ok {
				order = append(order, n)
			}
			byAlert[n] = append(byAlert[n], m.R)
		}
	}
	var out []*delivery
	for _, id := range order {
		r := d.active(id)
		if r == nil {
			continue
		}
		rs := byAlert[id]
		for len(rs) > 0 {
			n := min(len(rs), maxPerPost)
			out = append(out, &delivery{r: r, rs: rs[:n]})
			rs = rs[n:]
		}
	}
	return out
}

// deliverAll sends every delivery of a batch, at most parallel at once and perMethod to one
// webhook, owners taking turns (fair), all within one window: the batch's retries end, and a
// delivery not started is given up (window_passed), RetryWindow after the batch began, so a
// batch ends within the window and a POST whatever its webhooks do. errInterrupted when the
// replica stopped before some ended.
func (d *Deliverer) deliverAll(ctx context.Context, ds []*delivery) error {
	deadline := d.now().Add(d.o.RetryWindow)
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	methods := map[int64]chan struct{}{}
	var mu sync.Mutex
	interrupted := 0
	for _, dl := range fairOrder(ds) {
		m := methods[dl.r.alert.Method.ID]
		if m == nil {
			m = make(chan struct{}, perMethod)
			methods[dl.r.alert.Method.ID] = m
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m <- struct{}{}
			defer func() { <-m }()
			sem <- struct{}{}
			defer func() { <-sem }()
			if !d.deliver(ctx, dl, deadline) {
				mu.Lock()
				interrupted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if interrupted > 0 {
		return fmt.Errorf("%d of %d: %w", interrupted, len(ds), errInterrupted)
	}
	return nil
}

// fairOrder interleaves ds by owner (each owner's first delivery, then each one's second, ...),
// keeping each owner's own order, so the senders are not all taken by one owner's many alerts.
func fairOrder(ds []*delivery) []*delivery {
	byOwner := map[string][]*delivery{}
	var owners []string
	for _, dl := range ds {
		o := dl.r.alert.Owner
		if _, ok := byOwner[o]; !ok {
			owners = append(owners, o)
		}
		byOwner[o] = append(byOwner[o], dl)
	}
	out := make([]*delivery, 0, len(ds))
	for len(out) < len(ds) {
		for _, o := range owners {
			if q := byOwner[o]; len(q) > 0 {
				out = append(out, q[0])
				byOwner[o] = q[1:]
			}
		}
	}
	return out
}

// deliveryID is the id of a delivery: the same for the same alert and transfers (the same
// records), so a batch read again after a stop is sent under the ids it was sent under before.
func deliveryID(alert int64, rs []*engine.Rendered) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d", alert)
	for _, r := range rs {
		fmt.Fprintf(h, "\n%d:%d", r.Part, r.Off)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// body renders a delivery's JSON: each transfer as the stream sends it to the alert's owner.
func (d *Deliverer) body(ctx context.Context, dl *delivery, id string) []byte {
	book := d.books.get(ctx, dl.r.alert)
	b := Body{AlertID: dl.r.alert.ID, AlertName: dl.r.alert.Name, DeliveryID: id, Transfers: make([]json.RawMessage, len(dl.rs))}
	for i, r := range dl.rs {
		b.Transfers[i] = ws.LabelledTransfer(r, book)
	}
	out, _ := json.Marshal(b) // strings, numbers and rendered JSON always encode
	return out
}

// deliver POSTs dl until the webhook takes it, the failure is one a retry cannot fix, or the
// batch's window (deadline) passes (each counted with its outcome); false when the replica
// stops first. A webhook suspended after a failure is not POSTed to (webhook_suspended).
func (d *Deliverer) deliver(ctx context.Context, dl *delivery, deadline time.Time) bool {
	a := dl.r.alert
	if d.now().After(deadline) {
		d.m.givenUp(ctx, "window_passed", len(dl.rs))
		return true
	}
	if d.suspended(ctx, a.Method.ID) {
		d.m.givenUp(ctx, "webhook_suspended", len(dl.rs))
		return true
	}
	if dl = d.unsent(ctx, dl); len(dl.rs) == 0 {
		return true
	}
	hour := d.now()
	if dl = d.admit(ctx, dl, hour); len(dl.rs) == 0 {
		return true
	}
	id := deliveryID(a.ID, dl.rs)
	body := d.body(ctx, dl, id)
	wait := firstRetry
	for n := 1; ; n++ {
		at := d.post(ctx, a.Method.URL, a.Method.Secret, id, body)
		d.m.attempt(ctx, at)
		if at.ok {
			d.record(ctx, dl)
			if d.o.Meter != nil {
				d.o.Meter.Add(ownerIdentity(a), Route, int64(len(dl.rs)), d.now())
			}
			d.m.delivered(ctx, len(dl.rs))
			return true
		}
		reason := at.reason
		if at.retry && d.now().Add(wait).After(deadline) {
			reason = "retries_exhausted"
		}
		if reason != "" {
			d.suspend(ctx, a.Method.ID)
			d.giveBack(ctx, a.Owner, hour, len(dl.rs))
			d.m.givenUp(ctx, reason, len(dl.rs))
			d.o.Log.Warn("alert delivery given up; its webhook is suspended for a while", "alert", a.ID, "owner", a.Owner,
				"delivery", id, "transfers", len(dl.rs), "attempts", n, "reason", reason, "suspended_for", d.o.Cooldown, "error", at.err)
			return true
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			d.giveBackStopping(ctx, a.Owner, hour, len(dl.rs))
			return false
		case <-d.stopping:
			d.giveBackStopping(ctx, a.Owner, hour, len(dl.rs))
			return false
		}
		wait = min(2*wait, maxRetryWait)
	}
}

// identities name dl's transfers, each in its block (a transfer of a block a reorg replaced
// is another delivery): the same for a copy of a transfer at another offset, which ingest
// publishes when it publishes a round again.
func identities(dl *delivery) []string {
	ids := make([]string, len(dl.rs))
	for i, r := range dl.rs {
		ids[i] = r.T.Chain + " " + r.T.ID + " " + r.T.BlockHash
	}
	return ids
}

// unsent is dl without the transfers its alert delivered already (a batch read again after a
// replica stopped in its middle, a transfer published twice), counted as already_delivered. While Redis cannot tell
// (logged), dl is sent whole: at least once.
func (d *Deliverer) unsent(ctx context.Context, dl *delivery) *delivery {
	if d.o.Sent == nil {
		return dl
	}
	sent, err := d.o.Sent.Sent(ctx, dl.r.alert.ID, identities(dl), d.now())
	if err != nil {
		d.o.Log.Warn("alert deliveries made not read; sending", "alert", dl.r.alert.ID, "error", err)
		return dl
	}
	rs := make([]*engine.Rendered, 0, len(dl.rs))
	for i, r := range dl.rs {
		if !sent[i] {
			rs = append(rs, r)
		}
	}
	if n := len(dl.rs) - len(rs); n > 0 {
		d.m.alreadyDelivered(ctx, n)
	}
	return &delivery{r: dl.r, rs: rs}
}

// record records dl delivered, before it is charged: a stop between the two leaves it
// uncharged rather than charged twice.
func (d *Deliverer) record(ctx context.Context, dl *delivery) {
	if d.o.Sent == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := d.o.Sent.Record(rctx, dl.r.alert.ID, identities(dl), d.now()); err != nil {
		d.o.Log.Warn("alert delivery not recorded; a batch read again sends it again", "alert", dl.r.alert.ID, "error", err)
	}
}

// suspend stops POSTs to method for the cooldown, on every replica (Suspensions): a webhook
// that failed a delivery for good (refused it, or failed through the window) would otherwise
// take every later batch's window too, and be sent every later match for nothing.
func (d *Deliverer) suspend(ctx context.Context, method int64) {
	d.suspendMu.Lock()
	d.suspendedUntil[method] = d.now().Add(d.o.Cooldown)
	d.suspendMu.Unlock()
	if d.o.Suspensions == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := d.o.Suspensions.Suspend(rctx, method, d.o.Cooldown); err != nil {
		d.o.Log.Warn("a webhook's suspension not shared; other replicas may still POST to it", "method", method, "error", err)
	}
}

// suspended reports whether method is in its cooldown, as this replica knows it or, failing
// that, as another replica suspended it (then known here for the rest of it).
func (d *Deliverer) suspended(ctx context.Context, method int64) bool {
	d.suspendMu.Lock()
	until, ok := d.suspendedUntil[method]
	if ok && !d.now().Before(until) {
		delete(d.suspendedUntil, method)
		ok = false
	}
	d.suspendMu.Unlock()
	if ok || d.o.Suspensions == nil {
		return ok
	}
	left, err := d.o.Suspensions.Suspended(ctx, method)
	if err != nil {
		d.o.Log.Warn("a webhook's suspension not read; POSTing to it", "method", method, "error", err)
		return false
	}
	if left <= 0 {
		return false
	}
	d.suspendMu.Lock()
	d.suspendedUntil[method] = d.now().Add(left)
	d.suspendMu.Unlock()
	return true
}

// admit takes dl's transfers from its owner's hourly and monthly quota: what does not fit is
// given up (hourly_limit or monthly_limit; the owner logged once an hour), and the rest is
// delivered. Without a quota,
// or while Redis cannot count (logged), everything is.
func (d *Deliverer) admit(ctx context.Context, dl *delivery, at time.Time) *delivery {
	a := dl.r.alert
	if d.creditsSpent(ctx, a) {
		d.m.givenUp(ctx, "credit_limit", len(dl.rs))
		if d.firstLimited(a.Owner, at) {
			d.o.Log.Warn("an owner's credits are spent (their tier has no overage); their alerts' matches are given up until the billing period ends",
				"owner", a.Owner, "alert", a.ID, "tier", a.Tier)
		}
		return &delivery{r: dl.r}
	}
	q := d.o.Quota
	if q == nil {
		return dl
	}
	var tier store.Limits
	if d.o.TierQuota != nil {
		tier = d.o.TierQuota(a.Tier)
	}
	n, why, err := q.Admit(ctx, a.Owner, at, int64(len(dl.rs)), tier)
	if err != nil {
		d.o.Log.Warn("alert quota not counted; delivering", "alert", a.ID, "owner", a.Owner, "error", err)
		return dl
	}
	if int(n) == len(dl.rs) {
		return dl
	}
	d.m.givenUp(ctx, why, len(dl.rs)-int(n))
	if d.firstLimited(a.Owner, at) {
		d.o.Log.Warn("an owner's alerts reached a delivery limit; their further matches are given up until it resets",
			"owner", a.Owner, "alert", a.ID, "limit", why)
	}
	return &delivery{r: dl.r, rs: dl.rs[:n]}
}

// creditsSpent reports whether a's payer has spent the credits of a tier without overage, as
// the edge refuses their calls and the stream their connections then. While the ledger cannot
// be read (logged), it has not.
func (d *Deliverer) creditsSpent(ctx context.Context, a Alert) bool {
	if d.o.CreditsSpent == nil {
		return false
	}
	spent, err := d.o.CreditsSpent(ctx, ownerIdentity(a))
	if err != nil {
		d.o.Log.Warn("alert credits not checked; delivering", "alert", a.ID, "owner", a.Owner, "error", err)
		return false
	}
	return spent
}

// giveBack returns n transfers of owner's hour taken by admit and not delivered.
func (d *Deliverer) giveBack(ctx context.Context, owner string, at time.Time, n int) {
	if d.o.Quota == nil {
		return
	}
	if err := d.o.Quota.Return(ctx, owner, at, int64(n)); err != nil {
		d.o.Log.Warn("alert quota not given back", "owner", owner, "error", err)
	}
}

// giveBackStopping is giveBack for a delivery the replica's stop interrupts: the batch is read
// again, and taken again then. ctx may be done already, so the return gets its own 2 s.
func (d *Deliverer) giveBackStopping(ctx context.Context, owner string, at time.Time, n int) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	d.giveBack(rctx, owner, at, n)
}

// firstLimited reports whether owner reaching the quota of at's hour is news.
func (d *Deliverer) firstLimited(owner string, at time.Time) bool {
	hour := at.UTC().Truncate(time.Hour)
	d.limitedMu.Lock()
	defer d.limitedMu.Unlock()
	if !hour.Equal(d.limitedHour) {
		d.limited, d.limitedHour = map[string]bool{}, hour
	}
	if d.limited[owner] {
		return false
	}
	d.limited[owner] = true
	return true
}
