// Package progress reports the progress of long-running work (a chain backfill, an import, a
// re-publish): a log line at a steady interval and gauges on the service's meter, and, for a
// command run by hand on a terminal, a progress bar instead of the log lines.
//
// The gauges carry the attribute task, the job's name (not "job", which Prometheus gives the
// scrape target), and any attributes the caller adds, such as chain:
//
//	progress_done            units done (for ingest: the cursor block)
//	progress_total           units to do; 0 while unknown (for ingest: the confirmed head)
//	progress_remaining       total - done (for ingest: blocks behind the confirmed head)
//	progress_rate            units per second, smoothed over the last intervals
//	progress_eta_seconds     remaining / rate; -1 while the rate is zero and work remains
package progress

import (
	"context"
	"io"
	"log/slog"
	"math"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"golang.org/x/term"
)

// Options configure a Reporter.
type Options struct {
	// Job names the work in logs and metrics, e.g. "ingest", "intel.import", "intel.republish".
	Job string
	// Unit names what is counted, e.g. "blocks", "records".
	Unit string
	// Attrs are added to every gauge and log line, e.g. chain=ethereum.
	Attrs []attribute.KeyValue
	// Interval between log lines and gauge updates; default 10s.
	Interval time.Duration
	Log      *slog.Logger
	// Meter records the gauges; nil records none.
	Meter metric.Meter
	// Terminal, when it is a terminal (see IsTerminal), gets a progress bar and the log lines
	// are not written.
	Terminal *os.File
}

// IsTerminal says whether f is an interactive terminal.
func IsTerminal(f *os.File) bool { return f != nil && term.IsTerminal(int(f.Fd())) }

// Snapshot is the state of the work at one moment.
type Snapshot struct {
	Done, Total, Remaining int64
	// Rate is units per second; Rates holds the rates of the side counters (Count).
	Rate  float64
	Rates map[string]float64
	// ETA is the time left at Rate; negative when unknown.
	ETA time.Duration
}

// Reporter tracks one job. Its methods are safe for concurrent use.
type Reporter struct {
	o     Options
	attrs metric.MeasurementOption
	now   func() time.Time

	doneG, totalG, remainingG, rateG, etaG metric.Float64Gauge

	mu       sync.Mutex
	done     int64
	total    int64
	counts   map[string]int64
	last     time.Time
	lastDone int64
	lastCnt  map[string]int64
	rate     float64
	rates    map[string]float64
	primed   bool
	bar      *progressbar.ProgressBar
}

// New returns a reporter; call Run to write its lines at the interval, or Tick yourself.
func New(o Options) *Reporter {
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	m := o.Meter
	if m == nil {
		m = noop.NewMeterProvider().Meter("progress")
	}
	attrs := append([]attribute.KeyValue{attribute.String("task", o.Job)}, o.Attrs...)
	r := &Reporter{o: o, attrs: metric.WithAttributes(attrs...), now: time.Now,
		counts: map[string]int64{}, lastCnt: map[string]int64{}, rates: map[string]float64{}}
	r.doneG, _ = m.Float64Gauge("progress_done", metric.WithDescription("units of a long job done"))
	r.totalG, _ = m.Float64Gauge("progress_total", metric.WithDescription("units of a long job to do; 0 while unknown"))
	r.remainingG, _ = m.Float64Gauge("progress_remaining", metric.WithDescription("units of a long job left (ingest: blocks behind the confirmed head)"))
	r.rateG, _ = m.Float64Gauge("progress_rate", metric.WithDescription("units per second, smoothed"))
	r.etaG, _ = m.Float64Gauge("progress_eta_seconds", metric.WithDescription("seconds left at the current rate; -1 while unknown"))
	if IsTerminal(o.Terminal) {
		r.bar = progressbar.NewOptions64(-1, progressbar.OptionSetWriter(o.Terminal),
			progressbar.OptionSetDescription(o.Job), progressbar.OptionShowCount(), progressbar.OptionShowIts(),
			progressbar.OptionSetItsString(o.Unit), progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	return r
}

// SetTotal sets how many units there are to do (it may grow, as a chain's head does).
func (r *Reporter) SetTotal(n int64) {
	r.mu.Lock()
	r.total = n
	if r.bar != nil {
		r.bar.ChangeMax64(n)
	}
	r.mu.Unlock()
}

// Add counts n more units done.
func (r *Reporter) Add(n int64) { r.Set(r.get() + n) }

// Set sets the units done (for work measured by a position, such as a block number).
func (r *Reporter) Set(done int64) {
	r.mu.Lock()
	r.done = done
	if r.bar != nil {
		_ = r.bar.Set64(done)
	}
	r.mu.Unlock()
}

// Count adds n to a side counter whose rate is reported beside the main one (ingest counts
// transfers beside blocks).
func (r *Reporter) Count(name string, n int64) {
	r.mu.Lock()
	r.counts[name] += n
	r.mu.Unlock()
}

func (r *Reporter) get() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

// smoothing is the weight of the newest interval in the rate; the rest is the previous rate.
const smoothing = 0.5

// Tick updates the rates, records the gauges and writes the log line, unless the job is idle:
// nothing done since the last tick and nothing left (a drained queue, a caught-up follower
// whose head did not move).
func (r *Reporter) Tick(ctx context.Context) Snapshot {
	s, moved := r.update()
	r.record(ctx, s)
	if r.bar == nil && (moved || s.Remaining > 0) {
		args := []any{"task", r.o.Job, "unit", r.o.Unit, "done", s.Done, "total", s.Total, "remaining", s.Remaining,
			"per_second", round(s.Rate), "eta", etaString(s.ETA)}
		for _, a := range r.o.Attrs {
			args = append(args, string(a.Key), a.Value.Emit())
		}
		names := make([]string, 0, len(s.Rates))
		for n := range s.Rates {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			args = append(args, n+"_per_second", round(s.Rates[n]))
		}
		r.o.Log.Info("progress", args...)
	}
	return s
}

func (r *Reporter) update() (Snapshot, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	moved := !r.primed || r.done != r.lastDone
	if r.primed {
		if dt := now.Sub(r.last).Seconds(); dt > 0 {
			r.rate = smooth(r.rate, float64(r.done-r.lastDone)/dt)
			for n, c := range r.counts {
				r.rates[n] = smooth(r.rates[n], float64(c-r.lastCnt[n])/dt)
			}
		}
	}
	r.primed, r.last, r.lastDone = true, now, r.done
	for n, c := range r.counts {
		r.lastCnt[n] = c
	}
	s := Snapshot{Done: r.done, Total: r.total, Rate: r.rate, Rates: map[string]float64{}, ETA: -1}
	for n, v := range r.rates {
		s.Rates[n] = v
	}
	if r.total > r.done {
		s.Remaining = r.total - r.done
	}
	switch {
	case s.Remaining == 0:
		s.ETA = 0
	case s.Rate > 0:
		s.ETA = time.Duration(float64(s.Remaining) / s.Rate * float64(time.Second))
	}
	return s, moved
}

func smooth(prev, cur float64) float64 { return smoothing*cur + (1-smoothing)*prev }

func (r *Reporter) record(ctx context.Context, s Snapshot) {
	r.doneG.Record(ctx, float64(s.Done), r.attrs)
	r.totalG.Record(ctx, float64(s.Total), r.attrs)
	r.remainingG.Record(ctx, float64(s.Remaining), r.attrs)
	r.rateG.Record(ctx, s.Rate, r.attrs)
	eta := -1.0
	if s.ETA >= 0 {
		eta = s.ETA.Seconds()
	}
	r.etaG.Record(ctx, eta, r.attrs)
}

// Run ticks at the interval until ctx ends, then ticks once more.
func (r *Reporter) Run(ctx context.Context) error {
	t := time.NewTicker(r.o.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			r.Tick(context.WithoutCancel(ctx))
			return nil
		case <-t.C:
			r.Tick(ctx)
		}
	}
}

// Start runs the reporter in the background; the returned stop ends it, writes the final line
// and finishes the bar.
func (r *Reporter) Start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	return func() {
		cancel()
		<-done
		if r.bar != nil {
			_ = r.bar.Finish()
			_, _ = io.WriteString(r.o.Terminal, "\n")
		}
	}
}

func round(v float64) float64 { return math.Round(v*10) / 10 }

func etaString(d time.Duration) string {
	if d < 0 {
		return "unknown"
	}
	return d.Round(time.Second).String()
}
