package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/chainintel/chainintel/libs/promscrape"
	"github.com/chainintel/chainintel/libs/service"
)

// State is what a running stack advertises for `chainintel status`: every service's ports.
// `make run` writes it to StateFile (dev/tmp/stack.json unless CHAININTEL_STATE_FILE says
// otherwise) and removes it on a clean stop.
type State struct {
	PID      int                 `json:"pid"`
	URL      string              `json:"url"`
	Services map[string]Endpoint `json:"services"`
}

// WriteState writes the stack's state file.
func (s *Stack) WriteState(path string) error {
	b, err := json.MarshalIndent(State{PID: os.Getpid(), URL: s.URL, Services: s.Services}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadState reads a state file.
func ReadState(path string) (State, error) {
	var st State
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, fmt.Errorf("%s not found: is `make run` running (from this directory, with the same CHAININTEL_STATE_FILE)?", path)
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// MarshalJSON writes the endpoint as {"http": ..., "ops": ...}.
func (e Endpoint) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"http": e.HTTP, "ops": e.Ops})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Endpoint) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	e.HTTP, e.Ops = m["http"], m["ops"]
	return nil
}

// ServiceStatus is one service as `chainintel status` sees it.
type ServiceStatus struct {
	Name string
	// Healthy: the ops port answered /status and the service is ready.
	Healthy bool
	Problem string // why not healthy
	Status  service.Status
	// Lag is each consumed topic's records behind the partition end (the largest over groups).
	Lag map[string]float64
	// LagAge is how old each topic's Lag is (eventbus_consumer_lag_age_seconds, the largest over
	// groups): it grows while the consumer cannot reach the brokers and the lag keeps its value.
	LagAge map[string]float64
	// Chains is each ingested chain's position.
	Chains map[string]ChainPosition
	// Backlog is the service's deferred work: each progress job but ingest's (progress_remaining
	// and progress_eta_seconds of its task, e.g. balances.apply, transfers.rollups),
	// token-analytics' largest hour close lag, each outbox with rows not yet published
	// (outbox_pending_rows, outbox_oldest_pending_age_seconds), stream-fanout's feed lag
	// (stream_feed_lag summed over the partitions) and the edge's queued usage events
	// (edge_usage_events_queued), as text.
	Backlog []string
}

// ChainPosition is where ingest stands on one chain.
type ChainPosition struct {
	Cursor, Behind float64
	ETASeconds     float64 // -1: unknown
	// FailingRounds is how many indexing rounds in a row failed (the node unreachable, say):
	// the cursor and Behind are then as the last good round left them.
	FailingRounds float64
	// Reorgs is how many reorgs ingest handled on the chain since it started
	// (ingest_reorgs_total).
	Reorgs float64
}

// Collect reads every service's /status and /metrics.
func Collect(ctx context.Context, c *http.Client, services map[string]Endpoint) []ServiceStatus {
	names := make([]string, 0, len(services))
	for n := range services {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]ServiceStatus, 0, len(names))
	for _, n := range names {
		out = append(out, collectOne(ctx, c, n, services[n]))
	}
	return out
}

func collectOne(ctx context.Context, c *http.Client, name string, ep Endpoint) ServiceStatus {
	ss := ServiceStatus{Name: name, Lag: map[string]float64{}, LagAge: map[string]float64{}, Chains: map[string]ChainPosition{}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ep.Ops+"/status", nil)
	if err != nil {
		ss.Problem = err.Error()
		return ss
	}
	resp, err := c.Do(req)
	if err != nil {
		ss.Problem = "ops port unreachable: " + err.Error()
		return ss
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&ss.Status)
	resp.Body.Close()
	if err != nil {
		ss.Problem = "bad /status answer: " + err.Error()
		return ss
	}
	ss.Healthy, ss.Problem = ss.Status.Ready, ss.Status.NotReady
	samples, err := promscrape.Scrape(ctx, c, ep.Ops+"/metrics")
	if err != nil {
		return ss
	}
	for _, x := range samples.Select("eventbus_consumer_lag", nil) {
		t := x.Labels["topic"]
		ss.Lag[t] = max(ss.Lag[t], x.Value)
	}
	for _, x := range samples.Select("eventbus_consumer_lag_age_seconds", nil) {
		t := x.Labels["topic"]
		ss.LagAge[t] = max(ss.LagAge[t], x.Value)
	}
	for _, x := range samples.Select("ingest_cursor_block", nil) {
		ch := x.Labels["chain"]
		p := ChainPosition{Cursor: x.Value, ETASeconds: -1}
		if v, ok := samples.Value("ingest_head_lag_blocks", map[string]string{"chain": ch}); ok {
			p.Behind = v
		}
		if v, ok := samples.Value("progress_eta_seconds", map[string]string{"chain": ch, "task": "ingest"}); ok {
			p.ETASeconds = v
		}
		if v, ok := samples.Value("ingest_failing_rounds", map[string]string{"chain": ch}); ok {
			p.FailingRounds = v
		}
		if v, ok := samples.Value("ingest_reorgs_total", map[string]string{"chain": ch}); ok {
			p.Reorgs = v
		}
		ss.Chains[ch] = p
	}
	ss.Backlog = backlogText(samples)
	return ss
}

// backlogText describes the progress jobs other than ingest's (remaining and ETA), the hour
// close's largest lag over the chains, the outboxes with rows not yet published, the stream
// feed's lag and the edge's queued usage events (the last three when not 0), sorted.
func backlogText(samples promscrape.Samples) []string {
	var out []string
	for _, x := range samples.Select("progress_remaining", nil) {
		task := x.Labels["task"]
		if task == "" || task == "ingest" {
			continue
		}
		eta := "eta unknown"
		if v, ok := samples.Value("progress_eta_seconds", map[string]string{"task": task}); ok && v >= 0 {
			eta = "eta " + (time.Duration(v) * time.Second).String()
		}
		out = append(out, fmt.Sprintf("%s %.0f left, %s", task, x.Value, eta))
	}
	if lags := samples.Select("token_analytics_close_lag_seconds", nil); len(lags) > 0 {
		worst := lags[0]
		for _, x := range lags[1:] {
			if x.Value > worst.Value {
				worst = x
			}
		}
		out = append(out, fmt.Sprintf("hour close lag %s (%s, the largest of %d chains)",
			time.Duration(worst.Value)*time.Second, worst.Labels["chain"], len(lags)))
	}
	out = append(out, queueText(samples)...)
	sort.Strings(out)
	return out
}

// queueText describes the outboxes with rows not yet published (a relay that cannot publish
// shows only there: nothing reaches the topics, so no consumer lag grows), the stream feed's lag
// over its partitions and the edge's queued usage events, each when not 0.
func queueText(samples promscrape.Samples) []string {
	var out []string
	for _, x := range samples.Select("outbox_pending_rows", nil) {
		if x.Value <= 0 {
			continue
		}
		ob := x.Labels["outbox"]
		age := "age unknown"
		if v, ok := samples.Value("outbox_oldest_pending_age_seconds", map[string]string{"outbox": ob}); ok {
			age = "oldest " + (time.Duration(v) * time.Second).String()
		}
		out = append(out, fmt.Sprintf("outbox %s %.0f unpublished, %s", ob, x.Value, age))
	}
	if lags := samples.Select("stream_feed_lag", nil); len(lags) > 0 {
		sum := 0.0
		for _, x := range lags {
			sum += x.Value
		}
		if sum > 0 {
			out = append(out, fmt.Sprintf("stream feed %.0f records behind", sum))
		}
	}
	if v, ok := samples.Value("edge_usage_events_queued", nil); ok && v > 0 {
		out = append(out, fmt.Sprintf("usage events %.0f queued", v))
	}
	return out
}

// Print writes the one-screen summary.
func Print(w io.Writer, all []ServiceStatus) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tHEALTH\tCONSUMER LAG (records)\tINGEST POSITION\tBACKLOG\tKAFKA\tLAST ERROR")
	for _, s := range all {
		health := "healthy"
		if !s.Healthy {
			health = "UNHEALTHY: " + s.Problem
		}
		backlog := "-"
		if len(s.Backlog) > 0 {
			backlog = strings.Join(s.Backlog, "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, health, lagText(s.Lag, s.LagAge), chainText(s.Chains), backlog,
			kafkaText(s.Status.Kafka, time.Now()), lastErrorText(s.Status.LastError))
	}
	_ = tw.Flush()
}

// staleAfter is the age past which a consumer's lag, read every 10 s, or its service's last lag
// read counts as stale: the brokers cannot be reached.
const staleAfter = 60 * time.Second

func lagText(lag, age map[string]float64) string {
	if len(lag) == 0 {
		return "-"
	}
	var parts []string
	for t, v := range lag {
		p := fmt.Sprintf("%s=%.0f", t, v)
		if a := age[t]; a > staleAfter.Seconds() {
			p += fmt.Sprintf(" (STALE: read %s ago)", time.Duration(a)*time.Second)
		}
		parts = append(parts, p)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func chainText(cs map[string]ChainPosition) string {
	if len(cs) == 0 {
		return "-"
	}
	var parts []string
	for ch, p := range cs {
		eta := "eta unknown"
		if p.ETASeconds >= 0 {
			eta = "eta " + (time.Duration(p.ETASeconds) * time.Second).String()
		}
		if p.FailingRounds > 0 {
			eta = fmt.Sprintf("FAILING (%.0f rounds in a row; see LAST ERROR)", p.FailingRounds)
		}
		part := fmt.Sprintf("%s block %.0f, %.0f behind, %s", ch, p.Cursor, p.Behind, eta)
		if p.Reorgs > 0 {
			part += fmt.Sprintf(", %.0f reorgs since start", p.Reorgs)
		}
		parts = append(parts, part)
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// kafkaText is what the consumers and publishers of a service know of the brokers: "-" without
// either, the consumers' lag reads' state (the brokers unreachable when the oldest is over a
// minute old, or when none was made yet after an error), PUBLISH FAILING when the publishers'
// newest write failed, and the newest broker error, if any.
func kafkaText(k *service.KafkaStatus, now time.Time) string {
	if k == nil {
		return "-"
	}
	var states []string
	switch {
	case k.Consumers == 0:
	case k.LagReadAt != nil && now.Sub(*k.LagReadAt) > staleAfter:
		states = append(states, fmt.Sprintf("UNREACHABLE (lag last read %s ago)", now.Sub(*k.LagReadAt).Round(time.Second)))
	case k.LagReadAt == nil && k.LastError != nil:
		states = append(states, "UNREACHABLE (lag never read)")
	case k.LagReadAt == nil:
		states = append(states, "starting")
	}
	pe := k.PublishError
	if pe != nil && (k.PublishedAt == nil || pe.Time.After(*k.PublishedAt)) {
		states = append(states, "PUBLISH FAILING")
	}
	s := "ok"
	if len(states) > 0 {
		s = strings.Join(states, ", ")
	}
	if e := k.NewestError(); e != nil {
		s += fmt.Sprintf("; last error %s %s %s: %s", e.Time.Format(time.RFC3339), e.Topic, e.Op, e.Error)
	}
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

func lastErrorText(e *service.LastError) string {
	if e == nil {
		return "-"
	}
	s := e.Time.Format(time.RFC3339) + " " + e.Message
	if e.Error != "" {
		s += ": " + e.Error
	}
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
