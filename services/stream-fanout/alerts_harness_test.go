package streamfanout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/alerts"
	"github.com/segmentio/kafka-go"
)

// fakeUserLabels is user-labels' side of the alerts, served by httptest: its internal alert
// routes (GET /internal/alerts, GET /internal/alerts/{id}), and what a stream asks of it for a
// caller (labels, user entities, additions: none but the labels set).
type fakeUserLabels struct {
	t   *testing.T
	srv *httptest.Server

	mu     sync.Mutex
	alerts map[int64]alerts.Alert
	labels map[string][]map[string]string // by user: GET /user/labels
}

func newFakeUserLabels(t *testing.T) *fakeUserLabels {
	f := &fakeUserLabels{t: t, alerts: map[int64]alerts.Alert{}, labels: map[string][]map[string]string{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// callerOf is the user id of the request's X-Caller ("" without one).
func callerOf(r *http.Request) string {
	fs := strings.Fields(r.Header.Get("X-Caller"))
	if len(fs) < 3 {
		return ""
	}
	u, _ := url.PathUnescape(fs[2])
	return u
}

func (f *fakeUserLabels) serve(rw http.ResponseWriter, r *http.Request) {
	if callerOf(r) == "" {
		http.Error(rw, `{"error":"error validating API key"}`, http.StatusUnauthorized)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out any
	switch p := r.URL.Path; {
	case p == "/internal/alerts":
		after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		list := []alerts.Alert{}
		for _, a := range f.alerts {
			if a.ID > after {
				list = append(list, a)
			}
		}
		slices.SortFunc(list, func(a, b alerts.Alert) int { return int(a.ID - b.ID) })
		out = map[string]any{"alerts": list[:min(len(list), limit)]}
	case strings.HasPrefix(p, "/internal/alerts/"):
		id, _ := strconv.ParseInt(strings.TrimPrefix(p, "/internal/alerts/"), 10, 64)
		a, ok := f.alerts[id]
		if !ok {
			http.Error(rw, `{"error":"alert not found"}`, http.StatusNotFound)
			return
		}
		out = a
	case p == "/user/labels":
		out = append([]map[string]string{}, f.labels[callerOf(r)]...)
	case p == "/user/entities":
		out = []any{}
	case p == "/internal/entities":
		writeEntities(rw, r, nil)
		return
	case p == "/internal/additions":
		writeAdditions(rw, r, nil)
		return
	default:
		http.NotFound(rw, r)
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(out)
}

// put stores a (created or changed).
func (f *fakeUserLabels) put(a alerts.Alert) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a.UpdatedAt = time.Now().UTC()
	f.alerts[a.ID] = a
}

// remove deletes alert id.
func (f *fakeUserLabels) remove(id int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.alerts, id)
}

// hook is one POST a webhook receiver got.
type hook struct {
	header http.Header
	body   []byte
}

// receiver is a webhook: it answers the statuses set, in order, then 200, and records each POST.
type receiver struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	statuses []int
	got      []hook
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	rc := &receiver{t: t, statuses: statuses}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, hook{header: r.Header.Clone(), body: b})
		status := http.StatusOK
		if len(rc.statuses) > 0 {
			status, rc.statuses = rc.statuses[0], rc.statuses[1:]
		}
		rc.mu.Unlock()
		rw.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// hooks are the POSTs received so far.
func (rc *receiver) hooks() []hook {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// wait waits until the receiver got n POSTs and returns them.
func (rc *receiver) wait(n int) []hook {
	rc.t.Helper()
	waitFor(rc.t, fmt.Sprintf("%d webhook POSTs", n), func() bool { return len(rc.hooks()) >= n })
	return rc.hooks()
}

// webhookBody is a POST's body decoded.
type webhookBody struct {
	AlertID    int64             `json:"alertId"`
	AlertName  string            `json:"alertName"`
	DeliveryID string            `json:"deliveryId"`
	Transfers  []json.RawMessage `json:"transfers"`
}

func (h hook) decode(t *testing.T) webhookBody {
	t.Helper()
	var b webhookBody
	if err := json.Unmarshal(h.body, &b); err != nil {
		t.Fatalf("webhook body %s: %v", h.body, err)
	}
	return b
}

// ids are the transfer ids a POST carries.
func (h hook) ids(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, tr := range h.decode(t).Transfers {
		var v struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(tr, &v)
		out = append(out, v.ID)
	}
	return out
}

// alertsGroup is the world's alerts consumer group.
func (w *world) alertsGroup() string { return "alerts-" + w.prefix }

// startAlerts starts a replica delivering the alerts of f, webhooks on loopback allowed.
func (w *world) startAlerts(f *fakeUserLabels, tune func(*streamfanout.Config)) *replica {
	w.t.Helper()
	return w.start(func(c *streamfanout.Config) {
		c.UserLabelsURL, c.Alerts = f.srv.URL, "on"
		c.AlertWebhookAllowPrivate = true
		c.AlertsFromStart = true
		c.AlertsGroup = w.alertsGroup()
		c.AlertRetryWindow = 20 * time.Second
		if tune != nil {
			tune(c)
		}
	})
}

// alertOn is an enabled alert id of owner on transfers from from, delivered to rc.
func alertOn(id int64, owner, from string, rc *receiver) alerts.Alert {
	return alerts.Alert{ID: id, Owner: owner, Name: fmt.Sprintf("alert %d", id), Enabled: true, From: []string{from},
		Base: nil, To: []string{}, Tokens: []string{}, Method: alerts.Method{ID: id, Kind: "webhook", URL: rc.srv.URL + "/hook", Secret: fmt.Sprintf("secret-%d", id)}}
}

// announceAlert publishes user-labels' announcement of a change of user's alert id.
func (w *world) announceAlert(user string, id int64, op eventsv1.UserChange_Op) {
	w.t.Helper()
	ch := &eventsv1.UserChange{UserId: user, Kind: eventsv1.UserChange_KIND_ALERT, Op: op, AlertId: id}
	ctx, cancel := contextWithTimeout(20 * time.Second)
	defer cancel()
	if err := w.pub.Publish(ctx, eventbus.Event{Topic: eventsv1.TopicUserChanges, Key: user, Msg: ch}); err != nil {
		w.t.Fatal(err)
	}
}

// committed returns the alerts group's committed offset and the topic's end, per partition of
// chain.transfers.v1.
func (w *world) committed() (map[int]int64, map[int]int64) {
	w.t.Helper()
	ctx, cancel := contextWithTimeout(10 * time.Second)
	defer cancel()
	c := &kafka.Client{Addr: kafka.TCP(w.brokers...)}
	parts := []int{0, 1, 2, 3}
	got, err := c.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: w.alertsGroup(), Topics: map[string][]int{eventsv1.TopicTransfers: parts}})
	if err != nil {
		w.t.Fatal(err)
	}
	committed := map[int]int64{}
	for _, p := range got.Topics[eventsv1.TopicTransfers] {
		committed[p.Partition] = p.CommittedOffset
	}
	reqs := make([]kafka.OffsetRequest, len(parts))
	for i, p := range parts {
		reqs[i] = kafka.LastOffsetOf(p)
	}
	lo, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{eventsv1.TopicTransfers: reqs}})
	if err != nil {
		w.t.Fatal(err)
	}
	ends := map[int]int64{}
	for _, p := range lo.Topics[eventsv1.TopicTransfers] {
		ends[p.Partition] = p.LastOffset
	}
	return committed, ends
}

// waitHandled waits until the alerts group has committed every transfer published: each was
// matched and its deliveries ended.
func (w *world) waitHandled() {
	w.t.Helper()
	waitFor(w.t, "the alerts group to commit every transfer", func() bool {
		committed, ends := w.committed()
		for p, end := range ends {
			if end > 0 && committed[p] < end {
				return false
			}
		}
		return true
	})
}

// waitAlerts waits until the replica holds n alerts in state.
func (r *replica) waitAlerts(t *testing.T, state string, n float64) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%v alerts %s", n, state), func() bool { return r.metricWith(t, "stream_alerts", `state="`+state+`"`) == n })
}

// equalJSON fails the test unless got and want are the same JSON value.
func equalJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, wv any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &wv); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, wv) {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// usageCredits reads usage.calls.v1 until it has counted want credits of route for user (or 30
// s passed) and returns what it counted.
func (w *world) usageCredits(user, route string, want int64) int64 {
	w.t.Helper()
	var credits int64
	for _, u := range w.usageCalls(user, route, want) {
		credits += u.Credits
	}
	return credits
}

// usageCalls reads usage.calls.v1 until its events of route for user count want credits (or 30
// s passed) and returns them.
func (w *world) usageCalls(user, route string, want int64) []*eventsv1.UsageCall {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var credits int64
	var out []*eventsv1.UsageCall
	cons := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: w.brokers, Group: "test-usage-" + user + "-" + route, Topic: eventsv1.TopicUsageCalls, MaxWait: 10 * time.Millisecond},
		func() *eventsv1.UsageCall { return &eventsv1.UsageCall{} },
		func(_ context.Context, b []eventbus.Message[*eventsv1.UsageCall]) error {
			for _, m := range b {
				if u := m.Msg; u.UserId == user && u.Route == route {
					credits += u.Credits
					out = append(out, u)
				}
			}
			if credits >= want {
				cancel()
			}
			return nil
		})
	_ = cons.Run(ctx)
	return out
}
