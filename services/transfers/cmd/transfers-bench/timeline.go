package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// timeline records when each database step of one request started and ended (BENCH_SLOWEST
// prints it for the slowest requests): a slow request's time is then either a slow statement,
// a wait for a connection, or none of them (the process).
type timeline struct {
	t0    time.Time
	mu    sync.Mutex
	steps []step
}

type step struct {
	what       string
	start, end time.Duration
}

type timelineKey struct{}

func withTimeline(ctx context.Context) (context.Context, *timeline) {
	tl := &timeline{t0: time.Now()}
	return context.WithValue(ctx, timelineKey{}, tl), tl
}

func (tl *timeline) String() string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var b strings.Builder
	for _, s := range tl.steps {
		fmt.Fprintf(&b, "      %7.2f–%7.2f ms  %s\n", ms(s.start), ms(s.end), s.what)
	}
	return b.String()
}

// kinds adds each step's duration to by (keyed by its statement's first words), and the time of
// the request that no step covers (the process: routing, planning, scanning, rendering, and
// waiting to run) under "(outside the database)".
func (tl *timeline) kinds(total time.Duration, by map[string][]time.Duration) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	steps := slices.Clone(tl.steps)
	slices.SortFunc(steps, func(a, b step) int { return cmp.Compare(a.start, b.start) })
	var covered, end time.Duration
	for _, s := range steps {
		what := s.what
		if i := strings.Index(what, "] "); i >= 0 {
			what = what[i+2:]
		}
		if len(what) > 60 {
			what = what[:60]
		}
		by[what] = append(by[what], s.end-s.start)
		if s.end > end {
			covered += s.end - max(s.start, end)
			end = s.end
		}
	}
	by["(outside the database)"] = append(by["(outside the database)"], total-covered)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// tracer is a pgx tracer adding each statement, batch and connection acquisition to the
// context's timeline.
type tracer struct{}

type openStep struct {
	tl    *timeline
	what  string
	start time.Duration
}

type openKey struct{}

func (tracer) begin(ctx context.Context, what string) context.Context {
	tl, _ := ctx.Value(timelineKey{}).(*timeline)
	if tl == nil {
		return ctx
	}
	return context.WithValue(ctx, openKey{}, &openStep{tl, what, time.Since(tl.t0)})
}

func (tracer) end(ctx context.Context, suffix string) {
	o, _ := ctx.Value(openKey{}).(*openStep)
	if o == nil {
		return
	}
	o.tl.mu.Lock()
	o.tl.steps = append(o.tl.steps, step{o.what + suffix, o.start, time.Since(o.tl.t0)})
	o.tl.mu.Unlock()
}

func short(sql string) string {
	sql = strings.Join(strings.Fields(sql), " ")
	if len(sql) > 90 {
		sql = sql[:90] + "…"
	}
	return sql
}

func (t tracer) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return t.begin(ctx, fmt.Sprintf("[pid %d] %s", c.PgConn().PID(), short(d.SQL)))
}

func (t tracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	t.end(ctx, "")
}

func (t tracer) TraceBatchStart(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var sql string
	if d.Batch != nil && len(d.Batch.QueuedQueries) > 2 {
		sql = d.Batch.QueuedQueries[2].SQL
	}
	return t.begin(ctx, fmt.Sprintf("[pid %d] batch: %s", c.PgConn().PID(), short(sql)))
}

func (tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (t tracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	t.end(ctx, "")
}

func (t tracer) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	return t.begin(ctx, "acquire a connection")
}

func (t tracer) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, d pgxpool.TraceAcquireEndData) {
	if d.Conn != nil {
		t.end(ctx, fmt.Sprintf(" (pid %d)", d.Conn.PgConn().PID()))
	}
}
