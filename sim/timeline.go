package sim

import (
	"fmt"
	"math"
	"time"
)

// Timeline places a runner's transactions in time: the time of transaction j (counted from the
// world's start) is a function of j alone, so a world built again from the same seed and start
// and replayed through the same timeline produces the same transactions, byte for byte, at the
// same times. That is what lets a runner resume after a restart without publishing a
// transaction hash twice with different content.
type Timeline struct {
	// Start is the world's clock start (Config.Start).
	Start time.Time `json:"start"`
	// Backfill transactions are spread evenly over (Start, Anchor].
	Backfill int64     `json:"backfill"`
	Anchor   time.Time `json:"anchor"`
	// Live are the live stretches, in order: one per run of the runner. Each places
	// transactions From onwards at Rate per second after At.
	Live []Stretch `json:"live"`
}

// Stretch is a run's live pace: transaction j ≥ From is at At + (j-From+1)/Rate seconds.
type Stretch struct {
	From int64     `json:"from"`
	At   time.Time `json:"at"`
	Rate float64   `json:"rate"`
}

// State is what a runner saves before each publish (RunnerConfig.Save) to resume from.
type State struct {
	Timeline Timeline `json:"timeline"`
	// Published transactions were published; those up to Reserved may have been (a publish
	// was under way).
	Published int64 `json:"published"`
	Reserved  int64 `json:"reserved"`
}

// At is the time of transaction j.
func (tl *Timeline) At(j int64) time.Time {
	if j < tl.Backfill {
		span := tl.Anchor.Sub(tl.Start)
		return tl.Start.Add(time.Duration(float64(span) * float64(j+1) / float64(tl.Backfill)))
	}
	s := tl.stretch(j)
	return s.At.Add(time.Duration(float64(j-s.From+1) / s.Rate * float64(time.Second)))
}

// stretch is the live stretch of transaction j ≥ Backfill.
func (tl *Timeline) stretch(j int64) Stretch {
	s := tl.Live[0]
	for _, x := range tl.Live[1:] {
		if x.From > j {
			break
		}
		s = x
	}
	return s
}

// Due is how many transactions are at or before now.
func (tl *Timeline) Due(now time.Time) int64 {
	s := tl.Live[len(tl.Live)-1]
	if now.Before(s.At) {
		// Only a stretch's start can be after now (a clock set back): nothing more is due.
		return s.From
	}
	return s.From + int64(math.Floor(now.Sub(s.At).Seconds()*s.Rate))
}

// resume adds a live stretch from transaction from at rate, starting at now or, when the
// clock reads earlier, at the time of transaction from-1 (times never go back).
func (tl *Timeline) resume(from int64, now time.Time, rate float64) {
	at := now
	if from > 0 {
		if prev := tl.At(from - 1); prev.After(at) {
			at = prev
		}
	}
	tl.Live = append(tl.Live, Stretch{From: from, At: at, Rate: rate})
}

// check says whether tl can place transactions: a resumed state read from storage.
func (tl *Timeline) check() error {
	if len(tl.Live) == 0 || tl.Backfill < 0 || tl.Live[0].From != tl.Backfill {
		return fmt.Errorf("sim: timeline without a live stretch from its backfill (%d)", tl.Backfill)
	}
	for i, s := range tl.Live {
		if s.Rate <= 0 || (i > 0 && s.From < tl.Live[i-1].From) {
			return fmt.Errorf("sim: live stretch %d (from %d, rate %g) out of order", i, s.From, s.Rate)
		}
	}
	return nil
}

// NextAt simulates one transaction at each of times (in order, none before Now) and leaves the
// clock at the last. The transactions depend only on the world and on the times of every
// transaction simulated so far, not on how they were split into calls.
func (w *World) NextAt(times []time.Time) *Batch {
	b := &Batch{}
	w.cur = b
	defer func() { w.cur = nil }()
	for _, t := range times {
		w.advancePrices(t, b)
		w.now = t
		w.step(b)
	}
	w.flushBalances(b)
	return b
}
