package streamfanout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/chainintel/chainintel/libs/httpx"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/ledger"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/alerts"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/ws"
)

// TestAlertDelivered: a transfer matching an alert is POSTed to its webhook once, signed, with
// the Transfer exactly as the stream sends it to the alert's owner (their label on it), and
// charged one credit to the owner; a transfer matching no alert is not POSTed.
func TestAlertDelivered(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	rc := newReceiver(t)
	from, to := addr(1), addr(2)
	f.labels["user-ka"] = []map[string]string{{"name": "my cold wallet", "address": to, "chainType": "evm"}}
	f.put(alertOn(7, "user-ka", from, rc))
	r := w.startAlerts(f, nil)
	r.waitAlerts(t, "active", 1)
	// The stream's rendering of the same transfer for the same caller, to compare with.
	c := w.dial(r, ident("ka"), "")
	c.subscribe(map[string]any{"from": []string{from}})
	miss, hit := transferMsg(addr(3), to, 5), transferMsg(from, to, 5)
	w.publish(miss, hit)
	_, _, streamed := c.transfer()
	var frame struct {
		Payload struct {
			Transfer json.RawMessage `json:"transfer"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(streamed.raw, &frame); err != nil {
		t.Fatal(err)
	}
	h := rc.wait(1)[0]
	id := h.header.Get(alerts.HeaderDelivery)
	want := fmt.Sprintf(`{"alertId":7,"alertName":"alert 7","deliveryId":%q,"transfers":[%s]}`, id, frame.Payload.Transfer)
	equalJSON(t, h.body, []byte(want))
	if !strings.Contains(string(h.body), `"my cold wallet"`) {
		t.Fatalf("the owner's label is not on the transfer: %s", h.body)
	}
	ts, err := strconv.ParseInt(h.header.Get(alerts.HeaderTimestamp), 10, 64)
	if err != nil || id == "" || h.header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", h.header)
	}
	if got := h.header.Get(alerts.HeaderSignature); got != alerts.Sign("secret-7", ts, h.body) {
		t.Fatalf("signature %s, want %s", got, alerts.Sign("secret-7", ts, h.body))
	}
	// A later match is the next POST: neither the first again nor the transfer that matched nothing.
	next := transferMsg(from, addr(4), 6)
	w.publish(next)
	hs := rc.wait(2)
	w.waitHandled()
	if hs = rc.hooks(); len(hs) != 2 || !slices.Equal(hs[1].ids(t), []string{next.Id}) || !slices.Equal(hs[0].ids(t), []string{hit.Id}) {
		t.Fatalf("POSTs %d, second carrying %v", len(hs), hs[len(hs)-1].ids(t))
	}
	if got := w.usageCredits("user-ka", alerts.Route, 2); got != 2 {
		t.Fatalf("credits charged %d, want 2", got)
	}
}

// TestAlertChargedToOrg: an org member's alert (user-labels names the org and tier of whoever
// last wrote it) is charged as that member's stream is: the usage event carries the org id and
// the tier, so the org's credit period counts it; only the key id and route differ.
func TestAlertChargedToOrg(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	rc := newReceiver(t)
	from := addr(70)
	a := alertOn(8, "user-ko", from, rc)
	a.OrgID, a.Tier = "org-ko", "pro"
	f.put(a)
	r := w.startAlerts(f, nil)
	r.waitAlerts(t, "active", 1)
	member := httpx.Identity{KeyID: "ko", UserID: "user-ko", OrgID: "org-ko", Role: httpx.RoleOrgMember, Tier: "pro"}
	c := w.dial(r, member, "")
	c.subscribe(map[string]any{"from": []string{from}})
	w.publish(transferMsg(from, addr(71), 5))
	c.transfer()
	rc.wait(1)
	got := w.usageCalls("user-ko", alerts.Route, 1)
	if len(got) != 1 {
		t.Fatalf("alert usage events %v, want 1", got)
	}
	streamed := w.usageCalls("user-ko", ws.Route, 1)
	if len(streamed) == 0 {
		t.Fatal("no usage event of the stream")
	}
	// The event as the stream's for the same caller, but for the alert's key id and route.
	want := proto.Clone(streamed[0]).(*eventsv1.UsageCall)
	want.KeyId, want.Route, want.TimeMs, want.Credits, want.Rows = "alert:8@org-ko", alerts.Route, got[0].TimeMs, 1, 1
	if !proto.Equal(got[0], want) {
		t.Fatalf("alert usage\n got %v\nwant %v", got[0], want)
	}
	if got[0].OrgId != "org-ko" || got[0].Tier != "pro" {
		t.Fatalf("alert usage billed to org %q tier %q, want org-ko at pro", got[0].OrgId, got[0].Tier)
	}
}

// TestAlertRetriedThenCommitted: a webhook answering 500 is sent the same delivery (same id,
// same body) again, and the batch's offsets are committed only once it took it.
func TestAlertRetriedThenCommitted(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	rc := newReceiver(t, 500)
	from := addr(10)
	f.put(alertOn(1, "user-kr", from, rc))
	r := w.startAlerts(f, nil)
	r.waitAlerts(t, "active", 1)
	tr := transferMsg(from, addr(11), 5)
	w.publish(tr)
	first := rc.wait(1)[0]
	committed, ends := w.committed()
	for p, end := range ends {
		if end > 0 && committed[p] >= end {
			t.Fatalf("partition %d committed to %d before the webhook took the delivery", p, committed[p])
		}
	}
	hs := rc.wait(2)
	w.waitHandled()
	if hs[0].header.Get(alerts.HeaderDelivery) != hs[1].header.Get(alerts.HeaderDelivery) || string(hs[0].body) != string(hs[1].body) {
		t.Fatalf("the retry is not the same delivery:\n%s %s\n%s %s", first.header.Get(alerts.HeaderDelivery), first.body,
			hs[1].header.Get(alerts.HeaderDelivery), hs[1].body)
	}
	if n := len(rc.hooks()); n != 2 {
		t.Fatalf("POSTs %d, want 2", n)
	}
	if n := r.metricWith(t, "stream_alert_deliveries_total", `outcome="delivered"`); n != 1 {
		t.Fatalf("deliveries delivered %v, want 1", n)
	}
}

// TestAlertRefusedGivenUp: a webhook answering 400 is not asked again: the delivery is given
// up at once (counted with its reason) and the batch committed.
func TestAlertRefusedGivenUp(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	rc := newReceiver(t, 400, 400, 400)
	from := addr(20)
	f.put(alertOn(1, "user-kg", from, rc))
	r := w.startAlerts(f, nil)
	r.waitAlerts(t, "active", 1)
	w.publish(transferMsg(from, addr(21), 5))
	w.waitHandled()
	if n := len(rc.hooks()); n != 1 {
		t.Fatalf("POSTs %d, want 1", n)
	}
	if n := r.metricWith(t, "stream_alert_deliveries_total", `outcome="given_up"`, `reason="status_4xx"`); n != 1 {
		t.Fatalf("deliveries given up for a 4xx %v, want 1", n)
	}
}

// TestAlertLoopbackRefused: without STREAM_ALERT_WEBHOOK_ALLOW_PRIVATE a webhook on a loopback
// address is never connected to: the delivery is given up as refused_address.
func TestAlertLoopbackRefused(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	rc := newReceiver(t)
	from := addr(30)
	f.put(alertOn(1, "user-kl", from, rc))
	r := w.startAlerts(f, func(c *streamfanout.Config) { c.AlertWebhookAllowPrivate = false })
	r.waitAlerts(t, "active", 1)
	w.publish(transferMsg(from, addr(31), 5))
	w.waitHandled()
	if n := len(rc.hooks()); n != 0 {
		t.Fatalf("the loopback webhook got %d POSTs", n)
	}
	if n := r.metricWith(t, "stream_alert_deliveries_total", `outcome="given_up"`, `reason="refused_address"`); n != 1 {
		t.Fatalf("deliveries refused %v, want 1", n)
	}
}

// TestAlertDisabledThenDeleted: an alert disabled, then one deleted, as user-labels announces
// on user.changes.v1, is delivered nothing more; the others go on.
func TestAlertDisabledThenDeleted(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	ra, rb, rc := newReceiver(t), newReceiver(t), newReceiver(t)
	from := addr(40)
	a, b := alertOn(1, "user-kd", from, ra), alertOn(2, "user-kd", from, rb)
	f.put(a)
	f.put(b)
	f.put(alertOn(3, "user-ke", from, rc))
	r := w.startAlerts(f, nil)
	r.waitAlerts(t, "active", 3)
	w.publish(transferMsg(from, addr(41), 5))
	ra.wait(1)
	rb.wait(1)
	rc.wait(1)

	a.Enabled = false
	f.put(a)
	w.announceAlert("user-kd", 1, eventsv1.UserChange_OP_UPSERT)
	r.waitAlerts(t, "disabled", 1)
	w.publish(transferMsg(from, addr(42), 5))
	rb.wait(2)
	w.waitHandled()
	if n := len(ra.hooks()); n != 1 {
		t.Fatalf("the disabled alert got %d POSTs, want the 1 before", n)
	}

	f.remove(2)
	w.announceAlert("user-kd", 2, eventsv1.UserChange_OP_DELETE)
	r.waitAlerts(t, "active", 1)
	w.publish(transferMsg(from, addr(43), 5))
	rc.wait(3)
	w.waitHandled()
	if n := len(rb.hooks()); n != 2 {
		t.Fatalf("the deleted alert got %d POSTs, want the 2 before", n)
	}
}

// TestAlertRestartDoesNotRedeliver: a replica started again in the same group goes on after
// what the one before committed: a batch the webhook took is not sent again.
func TestAlertRestartDoesNotRedeliver(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	rc := newReceiver(t)
	from := addr(50)
	f.put(alertOn(1, "user-ks", from, rc))
	r := w.startAlerts(f, nil)
	r.waitAlerts(t, "active", 1)
	first := transferMsg(from, addr(51), 5)
	w.publish(first)
	rc.wait(1)
	w.waitHandled()
	r.stop()

	r = w.startAlerts(f, nil)
	r.waitAlerts(t, "active", 1)
	second := transferMsg(from, addr(52), 5)
	w.publish(second)
	rc.wait(2)
	w.waitHandled()
	hs := rc.hooks()
	if len(hs) != 2 || !slices.Equal(hs[0].ids(t), []string{first.Id}) || !slices.Equal(hs[1].ids(t), []string{second.Id}) {
		t.Fatalf("POSTs %d, last carrying %v; want the first then the second transfer once each", len(hs), hs[len(hs)-1].ids(t))
	}
}

// TestAlertOrphanedNotDelivered: a transfer of a block a reorg orphaned, known before it is
// matched, is not delivered; the others of the batch are.
func TestAlertOrphanedNotDelivered(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	rc := newReceiver(t)
	from := addr(60)
	orphan := blockHash(60)
	f.put(alertOn(1, "user-ko", from, rc))
	w.reorg([]string{orphan}, nil)
	r := w.startAlerts(f, nil)
	r.waitAlerts(t, "active", 1)
	all, survivors := awayWithOrphans(from, orphan)
	w.publish(all...)
	w.waitHandled()
	var got []string
	for _, h := range rc.hooks() {
		got = append(got, h.ids(t)...)
	}
	if !slices.Equal(got, survivors) {
		t.Fatalf("delivered %v, want %v", got, survivors)
	}
}

// TestAlertInvalidMatchesNothing: an alert whose fields are no valid filter, or that names an
// entity or type that does not exist, matches nothing and is counted; one naming an entity
// the read model holds matches its addresses.
func TestAlertInvalidMatchesNothing(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	exch := addr(70)
	w.attribute(exch, "exch", "cex", "")
	bad, good := newReceiver(t), newReceiver(t)
	unknown := alertOn(1, "user-ki", "no-such", bad)
	badBound := alertOn(2, "user-ki", exch, bad)
	badBound.USDGte = "lots"
	badType := alertOn(3, "user-ki", "type:zzz", bad)
	f.put(unknown)
	f.put(badBound)
	f.put(badType)
	f.put(alertOn(4, "user-ki", "exch", good))
	r := w.startAlerts(f, nil)
	r.waitAlerts(t, "invalid", 3)
	r.waitAlerts(t, "active", 1)
	tr := transferMsg(exch, addr(71), 5)
	w.publish(tr)
	w.waitHandled()
	if hs := good.hooks(); len(hs) != 1 || !slices.Equal(hs[0].ids(t), []string{tr.Id}) {
		t.Fatalf("the valid alert got %d POSTs", len(hs))
	}
	if n := len(bad.hooks()); n != 0 {
		t.Fatalf("invalid alerts got %d POSTs", n)
	}
	if n, d := r.metricWith(t, "stream_alert_invalid_total", `reason="unknown_name"`), r.metricWith(t, "stream_alert_invalid_total", `reason="decode"`); n != 2 || d != 1 {
		t.Fatalf("invalid alerts counted: unknown_name %v, decode %v", n, d)
	}
}

// TestAlertHourlyLimit: an owner's alerts deliver at most STREAM_ALERT_MAX_PER_HOUR transfers
// an hour, counted in Redis for every replica and alert of theirs; the rest of the hour's
// matches are given up (hourly_limit) and not charged; another owner has a quota of its own.
func TestAlertHourlyLimit(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	ra, rb, rc := newReceiver(t), newReceiver(t), newReceiver(t)
	from := addr(90)
	f.put(alertOn(1, "user-kh", from, ra))
	f.put(alertOn(2, "user-kh", from, rb))
	f.put(alertOn(3, "user-ko", from, rc))
	r := w.startAlerts(f, func(c *streamfanout.Config) { c.AlertMaxPerHour = 3 })
	r.waitAlerts(t, "active", 3)
	w.publish(transferMsg(from, addr(91), 5), transferMsg(from, addr(92), 5))
	w.waitHandled()
	w.publish(transferMsg(from, addr(93), 5), transferMsg(from, addr(94), 5))
	w.waitHandled()
	count := func(rc *receiver) int {
		n := 0
		for _, h := range rc.hooks() {
			var b struct{ Transfers []json.RawMessage }
			if err := json.Unmarshal(h.body, &b); err != nil {
				t.Fatal(err)
			}
			n += len(b.Transfers)
		}
		return n
	}
	if a, b, o := count(ra), count(rb), count(rc); a+b != 3 || o != 3 {
		t.Fatalf("user-kh's alerts got %d and %d transfers (want 3 in all), user-ko's %d (want 3)", a, b, o)
	}
	if n := r.metricWith(t, "stream_alert_transfers_total", `outcome="given_up"`, `reason="hourly_limit"`); n != 6 {
		t.Fatalf("transfers given up for the hourly limit %v, want 6 (user-kh's 8 matches less 3, user-ko's 4 less 3)", n)
	}
}

// TestAlertFailingWebhookDoesNotStallOthers: one owner's many alerts on a webhook that keeps
// failing hold at most 4 senders and one retry window: another owner's delivery of the same
// batch goes through, the failing webhook's deliveries are given up when the window ends (the
// ones not started by then without a POST), and the webhook is then suspended, so the next
// batch's matches for it are given up at once while the other owner's are delivered.
func TestAlertFailingWebhookDoesNotStallOthers(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	bad, good := newReceiver(t, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500,
		500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500), newReceiver(t)
	from := addr(100)
	for id := int64(1); id <= 10; id++ {
		a := alertOn(id, "user-kf", from, bad)
		a.Method.ID = 1 // one webhook for all ten
		f.put(a)
	}
	f.put(alertOn(11, "user-kg2", from, good))
	r := w.startAlerts(f, func(c *streamfanout.Config) { c.AlertRetryWindow = 2 * time.Second })
	r.waitAlerts(t, "active", 11)
	w.publish(transferMsg(from, addr(101), 5))
	w.waitHandled()
	if n := len(good.hooks()); n != 1 {
		t.Fatalf("the other owner's webhook got %d POSTs, want 1", n)
	}
	failed := len(bad.hooks())
	given := r.metricWith(t, "stream_alert_deliveries_total", `outcome="given_up"`, `reason="retries_exhausted"`) +
		r.metricWith(t, "stream_alert_deliveries_total", `outcome="given_up"`, `reason="window_passed"`) +
		r.metricWith(t, "stream_alert_deliveries_total", `outcome="given_up"`, `reason="webhook_suspended"`)
	if given != 10 {
		t.Fatalf("failing webhook: %v deliveries given up, want 10 (%d POSTs)", given, failed)
	}
	w.publish(transferMsg(from, addr(102), 5))
	w.waitHandled()
	if n := len(good.hooks()); n != 2 {
		t.Fatalf("the other owner's webhook got %d POSTs, want 2", n)
	}
	if n := len(bad.hooks()); n != failed {
		t.Fatalf("the suspended webhook got %d more POSTs", n-failed)
	}
	if n := r.metricWith(t, "stream_alert_deliveries_total", `outcome="given_up"`, `reason="webhook_suspended"`); n < 10 {
		t.Fatalf("deliveries given up as suspended %v, want at least the second batch's 10", n)
	}
}

// TestAlertMonthlyLimit: beside the hourly limit, an owner's alerts deliver at most
// STREAM_ALERT_MAX_PER_MONTH transfers a UTC month, counted in the same Redis script: with room
// in the hour, the month's limit alone stops them, and the rest is given up and not charged.
func TestAlertMonthlyLimit(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	ra, rb := newReceiver(t), newReceiver(t)
	from := addr(95)
	f.put(alertOn(1, "user-km", from, ra))
	f.put(alertOn(2, "user-km", from, rb))
	r := w.startAlerts(f, func(c *streamfanout.Config) { c.AlertMaxPerMonth = 3 })
	r.waitAlerts(t, "active", 2)
	w.publish(transferMsg(from, addr(96), 5), transferMsg(from, addr(97), 5))
	w.waitHandled()
	w.publish(transferMsg(from, addr(98), 5))
	w.waitHandled()
	n := 0
	for _, rc := range []*receiver{ra, rb} {
		for _, h := range rc.hooks() {
			var b struct{ Transfers []json.RawMessage }
			if err := json.Unmarshal(h.body, &b); err != nil {
				t.Fatal(err)
			}
			n += len(b.Transfers)
		}
	}
	if n != 3 {
		t.Fatalf("user-km's alerts got %d transfers, want 3 in all", n)
	}
	if n := r.metricWith(t, "stream_alert_transfers_total", `outcome="given_up"`, `reason="monthly_limit"`); n != 3 {
		t.Fatalf("transfers given up for the monthly limit %v, want 3 (the 6 matches less 3)", n)
	}
	if got := w.usageCredits("user-km", alerts.Route, 3); got != 3 {
		t.Fatalf("credits charged %d, want 3", got)
	}
}

// TestAlertStoppedMidBatchNotSentTwice: a replica stopped while one delivery of a batch is
// being retried leaves the batch uncommitted; the replica reading it again sends the delivery
// not taken yet, and not the one another webhook took before the stop (nor charges it again).
func TestAlertStoppedMidBatchNotSentTwice(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	took, failing := newReceiver(t), newReceiver(t, slices.Repeat([]int{503}, 1000)...)
	from := addr(80)
	f.put(alertOn(1, "user-ks2", from, took))
	f.put(alertOn(2, "user-ks2", from, failing))
	r := w.startAlerts(f, nil)
	r.waitAlerts(t, "active", 2)
	tr := transferMsg(from, addr(81), 5)
	w.publish(tr)
	took.wait(1)
	failing.wait(1)
	r.stop()
	failing.mu.Lock()
	failing.statuses = nil
	failing.mu.Unlock()

	r = w.startAlerts(f, nil)
	r.waitAlerts(t, "active", 2)
	hs := failing.wait(len(failing.hooks()) + 1)
	w.waitHandled()
	if last := hs[len(hs)-1]; !slices.Equal(last.ids(t), []string{tr.Id}) {
		t.Fatalf("the failing webhook's last POST carries %v, want %s", last.ids(t), tr.Id)
	}
	if got := took.hooks(); len(got) != 1 {
		t.Fatalf("the webhook that took the delivery got %d POSTs, want 1", len(got))
	}
	if n := r.metricWith(t, "stream_alert_transfers_total", `outcome="already_delivered"`); n != 1 {
		t.Fatalf("transfers already delivered %v, want 1", n)
	}
	r.stop()
	var credits int64
	for _, u := range w.usageCalls("user-ks2", alerts.Route, 2) {
		credits += u.Credits
	}
	if credits != 2 {
		t.Fatalf("credits charged %d, want 2 (one per alert)", credits)
	}
}

// TestAlertRepublishedSentOnce: a transfer ingest published twice (its round published again
// after a failure) reaches the webhook once, whether the copies come in one batch or two.
func TestAlertRepublishedSentOnce(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	rc := newReceiver(t)
	from := addr(90)
	f.put(alertOn(1, "user-kp", from, rc))
	r := w.startAlerts(f, nil)
	r.waitAlerts(t, "active", 1)
	tr, next := transferMsg(from, addr(91), 5), transferMsg(from, addr(92), 5)
	w.publish(tr, tr)
	w.waitHandled()
	w.publish(tr, next)
	w.waitHandled()
	var got []string
	for _, h := range rc.hooks() {
		got = append(got, h.ids(t)...)
	}
	if !slices.Equal(got, []string{tr.Id, next.Id}) {
		t.Fatalf("delivered %v, want %s then %s once each", got, tr.Id, next.Id)
	}
}

// TestAlertTierLimits: an alert paid under a tier without overage whose billing period's
// credits are spent delivers nothing (credit_limit), as the edge refuses the owner's calls and
// the stream their connections; one under a tier whose stream quota is below the alerts' own
// limit delivers at most the tier's quota an hour.
func TestAlertTierLimits(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	spent, tiny := newReceiver(t), newReceiver(t)
	from := addr(95)
	free := alertOn(1, "user-kt1", from, spent)
	free.Tier = "free"
	small := alertOn(2, "user-kt2", from, tiny)
	small.Tier = "tiny" // 3 stream transfers an hour
	f.put(free)
	f.put(small)
	name := ledger.Key(ledger.BilledEntity("user-kt1", ""), time.Now())
	if err := w.rdb.HSet(context.Background(), name, ledger.FieldUsed, 1000, ledger.FieldThrough, time.Now().UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	r := w.startAlerts(f, nil)
	r.waitAlerts(t, "active", 2)
	for i := range 5 {
		w.publish(transferMsg(from, addr(96+i), 5))
	}
	w.waitHandled()
	if n := len(spent.hooks()); n != 0 {
		t.Fatalf("the spent owner's webhook got %d POSTs, want none", n)
	}
	var got int
	for _, h := range tiny.hooks() {
		got += len(h.ids(t))
	}
	if got != 3 {
		t.Fatalf("the tiny tier's alert delivered %d transfers, want its hourly quota of 3", got)
	}
	if n := r.metricWith(t, "stream_alert_transfers_total", `outcome="given_up"`, `reason="credit_limit"`); n != 5 {
		t.Fatalf("transfers given up for the credit limit %v, want 5", n)
	}
	if n := r.metricWith(t, "stream_alert_transfers_total", `outcome="given_up"`, `reason="hourly_limit"`); n != 2 {
		t.Fatalf("transfers given up for the hourly limit %v, want 2", n)
	}
}

// TestAlertSuspensionShared: a webhook suspended after a failure is suspended for every replica
// of the group: one started after the replica that suspended it stopped POSTs nothing to it
// until the cooldown ends, then delivers to it again.
func TestAlertSuspensionShared(t *testing.T) {
	w := newWorld(t)
	f := newFakeUserLabels(t)
	rc := newReceiver(t, 400)
	from := addr(110)
	f.put(alertOn(1, "user-kss", from, rc))
	tune := func(c *streamfanout.Config) { c.AlertWebhookCooldown = 5 * time.Second }
	r := w.startAlerts(f, tune)
	r.waitAlerts(t, "active", 1)
	w.publish(transferMsg(from, addr(111), 5))
	w.waitHandled()
	r.stop()
	start := time.Now()

	r = w.startAlerts(f, tune)
	r.waitAlerts(t, "active", 1)
	w.publish(transferMsg(from, addr(112), 5))
	w.waitHandled()
	if n := len(rc.hooks()); n != 1 {
		t.Fatalf("the webhook got %d POSTs within its cooldown, want only the one refused", n)
	}
	if n := r.metricWith(t, "stream_alert_deliveries_total", `outcome="given_up"`, `reason="webhook_suspended"`); n != 1 {
		t.Fatalf("deliveries given up as suspended on the new replica %v, want 1", n)
	}
	time.Sleep(time.Until(start.Add(5 * time.Second)))
	last := transferMsg(from, addr(113), 5)
	w.publish(last)
	hs := rc.wait(2)
	if !slices.Equal(hs[1].ids(t), []string{last.Id}) {
		t.Fatalf("after the cooldown the webhook got %v, want %s", hs[1].ids(t), last.Id)
	}
}
