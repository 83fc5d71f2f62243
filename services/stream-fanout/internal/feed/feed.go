// Package feed reads a whole topic on every replica, partition by partition and without a
// consumer group: each replica must see every transfer, and sessions carry their own positions
// (offsets per partition), which a replica taking a session over reads again from.
package feed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/segmentio/kafka-go"
)

// Topic reads one topic.
type Topic struct {
	Brokers []string
	// Security is TLS and SASL for the brokers (the service's KAFKA_TLS* and KAFKA_SASL_*),
	// whose shared transport carries the metadata and offsets requests and whose dialer the
	// readers dial with; the zero value is plaintext.
	Security eventbus.Security
	Name     string
	Log      *slog.Logger
	// OnReadError, when set, is called on a partition's goroutine for each read of Follow
	// that failed (a metric counts them).
	OnReadError func(partition int, err error)

	// transport, when set, carries the metadata and offsets requests instead of Security's
	// (a test counts them).
	transport kafka.RoundTripper
}

// client is a client for the metadata and offsets requests.
func (t Topic) client() *kafka.Client {
	tr := t.transport
	if tr == nil {
		tr = t.Security.Transport()
	}
	return &kafka.Client{Addr: kafka.TCP(t.Brokers...), Timeout: 10 * time.Second, Transport: tr}
}

// Partitions lists the topic's partitions.
func (t Topic) Partitions(ctx context.Context) ([]int, error) {
	c := t.client()
	md, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{t.Name}})
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", t.Name, err)
	}
	for _, tp := range md.Topics {
		if tp.Name != t.Name {
			continue
		}
		if tp.Error != nil {
			return nil, fmt.Errorf("metadata of %s: %w", t.Name, tp.Error)
		}
		out := make([]int, 0, len(tp.Partitions))
		for _, p := range tp.Partitions {
			out = append(out, p.ID)
		}
		return out, nil
	}
	return nil, fmt.Errorf("topic %s not found", t.Name)
}

// Offsets returns the first (oldest) or the next-to-be-written (newest) offset of each partition.
func (t Topic) Offsets(ctx context.Context, newest bool) (map[int]int64, error) {
	parts, err := t.Partitions(ctx)
	if err != nil {
		return nil, err
	}
	reqs := make([]kafka.OffsetRequest, len(parts))
	for i, p := range parts {
		if newest {
			reqs[i] = kafka.LastOffsetOf(p)
		} else {
			reqs[i] = kafka.FirstOffsetOf(p)
		}
	}
	c := t.client()
	resp, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{t.Name: reqs}})
	if err != nil {
		return nil, fmt.Errorf("offsets of %s: %w", t.Name, err)
	}
	out := map[int]int64{}
	for _, po := range resp.Topics[t.Name] {
		if po.Error != nil {
			return nil, fmt.Errorf("offset of %s/%d: %w", t.Name, po.Partition, po.Error)
		}
		if newest {
			out[po.Partition] = po.LastOffset
		} else {
			out[po.Partition] = po.FirstOffset
		}
	}
	return out, nil
}

func (t Topic) reader(part int, maxWait time.Duration) *kafka.Reader {
	return kafka.NewReader(kafka.ReaderConfig{
		Brokers: t.Brokers, Dialer: t.Security.Dialer(), Topic: t.Name, Partition: part, MinBytes: 1, MaxBytes: 16 << 20,
		MaxWait: maxWait, ReadBatchTimeout: time.Second, QueueCapacity: 1000,
		ReadBackoffMin: 50 * time.Millisecond, ReadBackoffMax: 500 * time.Millisecond,
		ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
			if t.Log != nil {
				t.Log.Debug("kafka reader: "+fmt.Sprintf(msg, args...), "topic", t.Name, "partition", part)
			}
		}),
	})
}

// Gap is a stretch of a partition a read asked for and did not get: [From, To).
type Gap struct {
	Partition int
	// From is the offset the read was waiting for; To the first offset it reads (or owes) after
	// the gap.
	From, To int64
	// Reset: the partition's log ends below where the read was (the topic was deleted and
	// recreated, or the broker lost its records, and offsets start again); To is the new log's
	// first kept offset. Otherwise the records were deleted (retention, DeleteRecords) before
	// they were read.
	Reset bool
	// OverLimit: not a gap of the topic but a range its reader chose not to read (a resume's
	// catch-up over its limit, internal/ws); From and To are the range's ends.
	OverLimit bool
}

// stallCheck is how long a read waits for a record before it asks the broker where the
// partition's log starts and ends (Range), and how often Follow asks it of its partitions
// that read nothing meanwhile: kafka-go's reader waits silently at an offset past a
// recreated log's end (until the new log grows past it) and skips silently from one its
// retention deleted to the first kept.
const stallCheck = 2 * time.Second

// Bounds returns partition part's first kept offset and its end (the next to be written).
func (t Topic) Bounds(ctx context.Context, part int) (first, end int64, err error) {
	resp, err := t.client().ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		t.Name: {kafka.FirstOffsetOf(part), kafka.LastOffsetOf(part)}}})
	if err != nil {
		return 0, 0, fmt.Errorf("offsets of %s/%d: %w", t.Name, part, err)
	}
	for _, po := range resp.Topics[t.Name] {
		if po.Partition != part {
			continue
		}
		if po.Error != nil {
			return 0, 0, fmt.Errorf("offsets of %s/%d: %w", t.Name, part, po.Error)
		}
		return po.FirstOffset, po.LastOffset, nil
	}
	return 0, 0, fmt.Errorf("offsets of %s/%d: partition not in the answer", t.Name, part)
}

// stallTimer bounds each read of a partition by stallCheck, as a context with that timeout per
// read would, without one per record: the context and its timer are reused, the timer reset
// at each read, until a read outlasts it (then the next read gets a new context).
type stallTimer struct {
	parent context.Context
	ctx    context.Context
	cancel context.CancelFunc
	t      *time.Timer
}

func newStallTimer(parent context.Context) *stallTimer { return &stallTimer{parent: parent} }

// start returns the context of the next read, ending stallCheck from now (or with parent).
func (s *stallTimer) start() context.Context {
	if s.ctx == nil {
		s.ctx, s.cancel = context.WithCancel(s.parent)
		s.t = time.AfterFunc(stallCheck, s.cancel)
	} else {
		s.t.Reset(stallCheck)
	}
	return s.ctx
}

// stop ends the read's timer and reports whether the read's error is its having outlasted
// stallCheck (the parent still going).
func (s *stallTimer) stop(err error) bool {
	stalled := err != nil && s.ctx.Err() != nil && s.parent.Err() == nil
	if !s.t.Stop() || s.ctx.Err() != nil {
		// The timer fired (or is firing): its context is, or is about to be, cancelled.
		s.cancel()
		s.ctx = nil
	}
	return stalled
}

// release stops the timer for good.
func (s *stallTimer) release() {
	if s.ctx != nil {
		s.t.Stop()
		s.cancel()
	}
}

// skipped says whether a read that asked for offset want and got a record at got (> want) lost
// the records in between, as opposed to their never having been records (compaction,
// transaction markers): the log's start has moved past want. When the start cannot be read
// the records are counted lost: a gap told that was not is better than one hidden.
func (t Topic) skipped(ctx context.Context, part int, want int64) bool {
	first, _, err := t.Bounds(ctx, part)
	return err != nil || first > want
}

// Follow reads every partition in start from its offset there until ctx ends, calling handle
// for each record; records of one partition come in order. handle blocking holds that
// partition's reader back (backpressure): nothing is read ahead beyond the reader's queue.
//
// A partition whose log ends below the reader's position (the topic recreated) is read again
// from the new log's start; one whose records were deleted before the reader reached them is
// read from the first kept. Each such gap is handed to gap (nil: ignored) before the records
// after it, on the partition's goroutine; skips across offsets that were never records
// (compaction) are not gaps. Where the logs of the partitions that read nothing for stallCheck
// end is asked every stallCheck, in one ListOffsets call for all of them (watchIdle).
//
// A read that fails (the broker unreachable past kafka-go's attempts, or answering the
// partition with an error) is counted (OnReadError) and retried, as kafka-go's reader goes on
// after reporting it; the partition's first failure in a row and its recovery are logged. A
// partition that cannot go on (its reader cannot be positioned) ends Follow at once with its
// error, the other partitions stopped: no partition stops being read while the rest go on.
func (t Topic) Follow(ctx context.Context, start map[int]int64, handle func(kafka.Message), gap func(Gap)) error {
	if len(start) == 0 {
		// Nothing to follow (the topic's partitions could not be read): the caller asks again,
		// rather than every partition found later being read from its start.
		return nil
	}
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	var once sync.Once
	var failed error
	run := func(p int, off int64) *partWatch {
		w := &partWatch{part: p, below: -1}
		w.next.Store(off)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := t.follow(fctx, w, handle, gap); err != nil && fctx.Err() == nil {
				once.Do(func() { failed = err; stop() })
			}
		}()
		return w
	}
	watches := make([]*partWatch, 0, len(start))
	for p, off := range start {
		watches = append(watches, run(p, off))
	}
	// The check runs inside the group, so the partitions it adds (run) join a group that is
	// never empty before it ends.
	wg.Add(1)
	go func() {
		defer wg.Done()
		t.watchIdle(fctx, watches, func(p int) *partWatch {
			// A partition added to the topic is read from its first kept record: all it holds
			// was published after the replica started reading the topic.
			first, _, err := t.Bounds(fctx, p)
			if err != nil {
				first = 0
			}
			if t.Log != nil {
				t.Log.Info("reading a partition added to the topic", "topic", t.Name, "partition", p, "from", first)
			}
			return run(p, first)
		})
	}()
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return failed
}

// partWatch is what a partition's goroutine in Follow shares with the topic's idle check.
type partWatch struct {
	part int
	// next is the offset the reader waits for; reads counts the records it has read.
	next, reads atomic.Int64

	mu sync.Mutex
	// ctx is the reader's reads' context, cancelled (cancel) when the check finds the log
	// ending below next: kafka-go's reader would wait there silently until the new log grew
	// past it.
	ctx    context.Context
	cancel context.CancelFunc
	// below is the reader's position the check found the log ending below (-1: none).
	below int64
}

// readCtx is the context of the partition's next read: the same until the check cancels it.
func (w *partWatch) readCtx(parent context.Context) context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil || w.ctx.Err() != nil {
		w.ctx, w.cancel = context.WithCancel(parent)
	}
	return w.ctx
}

// endsBelow records that the check found the log ending below the reader's position at, and
// ends the partition's read.
func (w *partWatch) endsBelow(at int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.below = at
	if w.cancel != nil {
		w.cancel()
	}
}

// takeBelow reports whether the check found the log ending below next (one found below an
// earlier position is stale: the reader has read on since).
func (w *partWatch) takeBelow(next int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	at := w.below
	w.below = -1
	return at == next
}

// addPartitions starts reading (add) every partition the topic has that watches does not, and
// returns watches with them. When the topic's partitions cannot be listed it tries again at the
// next check.
func (t Topic) addPartitions(ctx context.Context, watches []*partWatch, add func(p int) *partWatch) []*partWatch {
	parts, err := t.Partitions(ctx)
	if err != nil || len(parts) <= len(watches) {
		return watches
	}
	known := make(map[int]bool, len(watches))
	for _, w := range watches {
		known[w.part] = true
	}
	for _, p := range parts {
		if !known[p] && ctx.Err() == nil {
			watches = append(watches, add(p))
		}
	}
	return watches
}

// watchIdle checks, every stallCheck until ctx ends, for partitions added to the topic (read
// from their start, add) and where the logs of the partitions of
// watches that read nothing since the check before end, in one ListOffsets call for all of
// them (kafka-go's client sends it as one small request per partition, pipelined on the
// shared transport), and ends the read of each whose log ends below its reader's position.
// An idle topic so costs one call per interval, whatever its partitions, not one per
// partition at its own time.
func (t Topic) watchIdle(ctx context.Context, watches []*partWatch, add func(p int) *partWatch) {
	tick := time.NewTicker(stallCheck)
	defer tick.Stop()
	var seen []int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		watches = t.addPartitions(ctx, watches, add)
		for len(seen) < len(watches) {
			seen = append(seen, -1)
		}
		var idle []*partWatch
		var parts []int
		at := map[int]int64{}
		for i, w := range watches {
			n := w.reads.Load()
			if n == seen[i] {
				idle, parts = append(idle, w), append(parts, w.part)
				at[w.part] = w.next.Load()
			}
			seen[i] = n
		}
		if len(idle) == 0 {
			continue
		}
		ends, err := t.Ends(ctx, parts)
		if err != nil {
			continue // the broker cannot say; asked again at the next check
		}
		for _, w := range idle {
			if end, ok := ends[w.part]; ok && end < at[w.part] {
				w.endsBelow(at[w.part])
			}
		}
	}
}

// Ends returns the end (the next offset to be written) of each partition of parts the broker
// answered without an error, from one ListOffsets call.
func (t Topic) Ends(ctx context.Context, parts []int) (map[int]int64, error) {
	reqs := make([]kafka.OffsetRequest, len(parts))
	for i, p := range parts {
		reqs[i] = kafka.LastOffsetOf(p)
	}
	resp, err := t.client().ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{t.Name: reqs}})
	if err != nil {
		return nil, fmt.Errorf("offsets of %s: %w", t.Name, err)
	}
	out := make(map[int]int64, len(parts))
	for _, po := range resp.Topics[t.Name] {
		if po.Error == nil {
			out[po.Partition] = po.LastOffset
		}
	}
	return out, nil
}

// follow is Follow for one partition.
func (t Topic) follow(ctx context.Context, w *partWatch, handle func(kafka.Message), gap func(Gap)) error {
	p, next := w.part, w.next.Load()
	r := t.reader(p, 100*time.Millisecond)
	defer func() { r.Close() }()
	if err := r.SetOffset(next); err != nil {
		return err
	}
	var fails readFailures
	for {
		m, err := r.FetchMessage(w.readCtx(ctx))
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, context.Canceled):
			if !w.takeBelow(next) {
				continue
			}
			// Asked again, with the log's start to read from: the check's answer may predate
			// records read since.
			first, end, berr := t.Bounds(ctx, p)
			if berr != nil || end >= next {
				continue
			}
			if t.Log != nil {
				t.Log.Warn("a partition's log ends below the reader's position (the topic was recreated); reading the new log from its start",
					"topic", t.Name, "partition", p, "position", next, "end", end, "start", first)
			}
			if gap != nil {
				gap(Gap{Partition: p, From: next, To: first, Reset: true})
			}
			r.Close()
			r = t.reader(p, 100*time.Millisecond)
			if err := r.SetOffset(first); err != nil {
				return err
			}
			next = first
			w.next.Store(next)
			continue
		case errors.Is(err, io.EOF):
			return fmt.Errorf("read %s/%d: %w", t.Name, p, err) // the reader was closed
		default:
			fails.failed(t, p, next, err)
			continue
		}
		fails.read(t, p)
		if m.Offset > next && gap != nil && t.skipped(ctx, p, next) {
			gap(Gap{Partition: p, From: next, To: m.Offset})
		}
		next = m.Offset + 1
		w.next.Store(next)
		w.reads.Add(1)
		handle(m)
	}
}

// readFailures are a partition's failed reads in a row.
type readFailures struct {
	n     int
	since time.Time
}

// failed counts a failed read at offset next, logging the first of a row: kafka-go's reader
// retries on its own, reporting an error each time its attempts fail, so a broker away for
// long would otherwise log one line per attempt.
func (f *readFailures) failed(t Topic, p int, next int64, err error) {
	if t.OnReadError != nil {
		t.OnReadError(p, err)
	}
	f.n++
	if f.n > 1 {
		return
	}
	f.since = time.Now()
	if t.Log != nil {
		t.Log.Error("a partition cannot be read; retrying (each failed read counts in the feed's read errors)",
			"topic", t.Name, "partition", p, "position", next, "error", err)
	}
}

// read ends a row of failures with a record read, logging it.
func (f *readFailures) read(t Topic, p int) {
	if f.n == 0 {
		return
	}
	if t.Log != nil {
		t.Log.Info("a partition is read again", "topic", t.Name, "partition", p, "failedReads", f.n, "after", time.Since(f.since).Round(time.Millisecond))
	}
	f.n = 0
}

// Range reads partition part from offset from up to (not including) to, in order, and returns
// what it could not read: records deleted before it reached them (retention; the gap ends at
// the first record it read after them, or at to), or, ending the read, a reset (the
// partition's log now ends below to, which a reader of the topic reached before: the topic
// was recreated). The records read before a reset are of the new log, not of the range.
func (t Topic) Range(ctx context.Context, part int, from, to int64, handle func(kafka.Message)) ([]Gap, error) {
	if from >= to {
		return nil, nil
	}
	r := t.reader(part, 50*time.Millisecond)
	defer r.Close()
	if err := r.SetOffset(from); err != nil {
		return nil, err
	}
	var gaps []Gap
	next := from
	st := newStallTimer(ctx)
	defer st.release()
	for next < to {
		m, err := r.FetchMessage(st.start())
		if st.stop(err) && ctx.Err() == nil {
			first, end, berr := t.Bounds(ctx, part)
			switch {
			case berr != nil:
				// Records the range holds are not coming and the broker cannot say why (the
				// topic deleted, say): ended rather than waited for.
				return gaps, fmt.Errorf("read %s/%d from %d: no record within %s: %w", t.Name, part, next, stallCheck, berr)
			case end < to:
				return append(gaps, Gap{Partition: part, From: next, To: first, Reset: true}), nil
			case first >= to:
				// Everything left was deleted, and nothing after it written yet to skip to.
				return append(gaps, Gap{Partition: part, From: next, To: to}), nil
			}
			continue
		}
		if err != nil {
			return gaps, fmt.Errorf("read %s/%d from %d: %w", t.Name, part, next, err)
		}
		if m.Offset > next && t.skipped(ctx, part, next) {
			gaps = append(gaps, Gap{Partition: part, From: next, To: min(m.Offset, to)})
		}
		if m.Offset >= to {
			return gaps, nil
		}
		next = m.Offset + 1
		handle(m)
	}
	return gaps, nil
}
