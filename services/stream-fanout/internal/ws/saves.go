package ws

import (
	"sync"
	"sync/atomic"
	"time"
)

// saver holds the turns of the sessions' saves at disconnect and judges whether Redis takes
// them. After failThreshold saves in a row failed, Redis is taken as failing: the saves waiting
// for a turn, and those of connections ending meanwhile, give up at once (their sessions stay at
// their last checkpoint) instead of each spending the save timeout in its turn, which with
// thousands of connections ending together (a network cut) would keep them waiting for hours.
// Every cooldown one save is let through to probe Redis; one succeeding ends the failing state.
type saver struct {
	turns         chan struct{}
	timeout       time.Duration // one save's bound, from when it has its turn
	failThreshold int
	cooldown      time.Duration
	now           func() time.Time

	mu      sync.Mutex
	fails   int  // saves failed in a row
	open    bool // Redis is failing
	retryAt time.Time
	probing bool // a probe save is under way
	// failing is closed when Redis starts failing, so the saves waiting for a turn give up;
	// replaced by an open one when it works again.
	failing chan struct{}

	pending atomic.Int64 // saves waiting for a turn or holding one
	unsaved atomic.Int64 // sessions not saved since the last report
}

// The saver's defaults: 16 saves at once, each bounded by saveLimit; Redis is taken as failing
// after a whole round of turns failed in a row, and probed every saveCooldown.
const (
	saveTurns         = 16
	saveFailThreshold = saveTurns
	saveCooldown      = 5 * time.Second
	// saveReportEvery is how often the sessions not saved are logged (with their count).
	saveReportEvery = 10 * time.Second
)

func newSaver() *saver {
	return &saver{turns: make(chan struct{}, saveTurns), timeout: saveLimit, failThreshold: saveFailThreshold,
		cooldown: saveCooldown, now: time.Now, failing: make(chan struct{})}
}

// acquire waits for a save turn; ok false when Redis is failing (the save is given up, no turn
// held). probe: the save is the one let through to find out whether Redis works again.
func (s *saver) acquire() (ok, probe bool) {
	for {
		s.mu.Lock()
		open, failing := s.open, s.failing
		if open && !s.probing && !s.now().Before(s.retryAt) {
			s.probing, probe = true, true
		}
		s.mu.Unlock()
		if probe {
			// The others give their turns up at once: this wait is short.
			s.turns <- struct{}{}
			return true, true
		}
		if open {
			return false, false
		}
		select {
		case s.turns <- struct{}{}:
			return true, false
		case <-failing:
		}
	}
}

// ready reports whether a save could start now: a turn is free and Redis is not failing.
func (s *saver) ready() bool {
	s.mu.Lock()
	open := s.open
	s.mu.Unlock()
	return !open && len(s.turns) < cap(s.turns)
}

func (s *saver) release() { <-s.turns }

// record takes the outcome of a save that had a turn (err nil: Redis took it).
func (s *saver) record(err error, probe bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if probe {
		s.probing = false
	}
	if err == nil {
		s.fails = 0
		if s.open {
			s.open, s.failing = false, make(chan struct{})
		}
		return
	}
	s.fails++
	switch {
	case s.open:
		s.retryAt = s.now().Add(s.cooldown)
	case s.fails >= s.failThreshold:
		s.open, s.retryAt = true, s.now().Add(s.cooldown)
		close(s.failing)
	}
}

// isFailing reports whether Redis is taken as failing.
func (s *saver) isFailing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}
