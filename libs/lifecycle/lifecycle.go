// Package lifecycle runs a service's parts and stops them in order.
//
// Parts are added in dependency order (pools and producers first, consumers next, the HTTP server
// and readiness last). Run starts every part that has a run function, then waits for the parent
// context to end or for any part to fail. Shutdown walks the parts in reverse order of addition:
// readiness goes 503 first, HTTP stops accepting and drains, consumers finish their batch and
// commit, producers flush, pools close, telemetry flushes.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Part is one piece of a running service.
//
// Run, when set, blocks until the part ends; it gets a context that is cancelled when the part is
// stopped without a Stop function. Stop, when set, asks the part to finish gracefully within the
// context's deadline (for an HTTP server: Shutdown). A part with only Stop is a cleanup step.
type Part struct {
	Name string
	Run  func(ctx context.Context) error
	Stop func(ctx context.Context) error
}

// Runner starts parts and stops them in reverse order. The zero value is not usable; use New.
type Runner struct {
	log     *slog.Logger
	timeout time.Duration
	parts   []Part
	// ran is set by Run or Stop: the parts' stop functions run once.
	ran bool
}

// New returns a runner whose whole shutdown gets at most timeout.
func New(log *slog.Logger, timeout time.Duration) *Runner {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return &Runner{log: log, timeout: timeout}
}

// Add appends a part. Parts must be added before Run.
func (r *Runner) Add(p Part) { r.parts = append(r.parts, p) }

// OnStop appends a cleanup step (a part with only Stop).
func (r *Runner) OnStop(name string, stop func(ctx context.Context) error) {
	r.Add(Part{Name: name, Stop: stop})
}

// Run starts every part and blocks until ctx ends or a part fails, then shuts everything down in
// reverse order. It returns the first part failure (nil when the stop was asked for), joined with
// any shutdown errors.
func (r *Runner) Run(ctx context.Context) error {
	if r.ran {
		return errors.New("lifecycle: the runner already ran or stopped")
	}
	r.ran = true
	type running struct {
		cancel context.CancelFunc
		done   chan struct{}
	}
	states := make([]*running, len(r.parts))
	failed := make(chan error, len(r.parts))
	for i, p := range r.parts {
		if p.Run == nil {
			continue
		}
		pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		st := &running{cancel: cancel, done: make(chan struct{})}
		states[i] = st
		go func(p Part) {
			defer close(st.done)
			err := p.Run(pctx)
			if err != nil && !errors.Is(err, context.Canceled) {
				failed <- fmt.Errorf("%s: %w", p.Name, err)
				return
			}
			if pctx.Err() == nil {
				// A part that ends on its own before being asked is a failure of the service.
				failed <- fmt.Errorf("%s: stopped unexpectedly", p.Name)
			}
		}(p)
	}

	var cause error
	select {
	case <-ctx.Done():
		r.log.Info("shutdown requested")
	case cause = <-failed:
		r.log.Error("part failed; shutting down", "error", cause)
	}

	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout)
	defer cancel()
	var errs []error
	if cause != nil {
		errs = append(errs, cause)
	}
	for i := len(r.parts) - 1; i >= 0; i-- {
		p, st := r.parts[i], states[i]
		start := time.Now()
		if p.Stop != nil {
			if err := p.Stop(sctx); err != nil && !errors.Is(err, context.Canceled) {
				errs = append(errs, fmt.Errorf("stop %s: %w", p.Name, err))
			}
		}
		if st != nil {
			if p.Stop == nil {
				st.cancel()
			}
			select {
			case <-st.done:
			case <-sctx.Done():
				st.cancel()
				errs = append(errs, fmt.Errorf("stop %s: %w", p.Name, sctx.Err()))
			}
			st.cancel()
		}
		r.log.Debug("stopped", "part", p.Name, "took", time.Since(start))
	}
	return errors.Join(errs...)
}

// Stop runs the stop functions of every part added, in reverse order of addition, within the
// runner's timeout, for a runner whose Run is never called: a service whose assembly failed
// half way closes what it had built. Parts' run functions were never started and are not. After
// Run or Stop it does nothing. It returns the stop errors, joined.
func (r *Runner) Stop(ctx context.Context) error {
	if r.ran {
		return nil
	}
	r.ran = true
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.timeout)
	defer cancel()
	var errs []error
	for i := len(r.parts) - 1; i >= 0; i-- {
		if p := r.parts[i]; p.Stop != nil {
			if err := p.Stop(sctx); err != nil && !errors.Is(err, context.Canceled) {
				errs = append(errs, fmt.Errorf("stop %s: %w", p.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}
