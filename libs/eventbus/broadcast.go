package eventbus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// reader is what a Consumer reads through: a consumer group's kafka.Reader, or a
// broadcastReader.
type reader interface {
	FetchMessage(ctx context.Context) (kafka.Message, error)
	CommitMessages(ctx context.Context, msgs ...kafka.Message) error
	Close() error
}

// partitionWatch is how often a broadcast reader looks for partitions added to its topic.
const partitionWatch = 5 * time.Second

// broadcastReader reads every partition of a topic without a consumer group (Broadcast): from
// the newest offsets when it starts, and a partition added later from its first record. Nothing
// is committed to the broker; a restarted consumer starts again at the end. The reader keeps the
// offsets handed to CommitMessages in memory instead, so the consumer's lag can count from them.
type broadcastReader struct {
	o      ConsumerOptions
	client *kafka.Client
	msgs   chan kafka.Message
	ctx    context.Context // ends at Close
	cancel context.CancelFunc

	mu      sync.Mutex
	started bool
	readers map[int]*kafka.Reader
	// next is, by partition, the offset after the last committed record, or the offset the
	// partition's reading started at; a partition added later (read from its first record) has
	// none until its first commit.
	next map[int]int64
	wg   sync.WaitGroup
}

func newBroadcastReader(o ConsumerOptions) *broadcastReader {
	ctx, cancel := context.WithCancel(context.Background())
	return &broadcastReader{
		o:       o,
		client:  &kafka.Client{Addr: kafka.TCP(o.Brokers...), Timeout: 10 * time.Second, Transport: o.Security.Transport()},
		msgs:    make(chan kafka.Message, 4*o.MaxBatch),
		ctx:     ctx,
		cancel:  cancel,
		readers: map[int]*kafka.Reader{},
		next:    map[int]int64{},
	}
}

// start positions a reader at the newest offset of each partition, then watches for new
// partitions. Until it succeeds (the broker or the topic missing), FetchMessage retries it.
func (b *broadcastReader) start(ctx context.Context) error {
	parts, err := b.partitions(ctx)
	if err != nil {
		return err
	}
	reqs := make([]kafka.OffsetRequest, len(parts))
	for i, p := range parts {
		reqs[i] = kafka.LastOffsetOf(p)
	}
	resp, err := b.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{b.o.Topic: reqs}})
	if err != nil {
		return fmt.Errorf("newest offsets of %s: %w", b.o.Topic, err)
	}
	offsets := map[int]int64{}
	for _, po := range resp.Topics[b.o.Topic] {
		if po.Error != nil {
			return fmt.Errorf("newest offset of %s/%d: %w", b.o.Topic, po.Partition, po.Error)
		}
		offsets[po.Partition] = po.LastOffset
	}
	for _, p := range parts {
		off, ok := offsets[p]
		if !ok {
			return fmt.Errorf("newest offset of %s/%d: not in the broker's answer", b.o.Topic, p)
		}
		if err := b.add(p, off); err != nil {
			return err
		}
	}
	b.wg.Add(1)
	go b.watch()
	return nil
}

// partitions lists the topic's partitions.
func (b *broadcastReader) partitions(ctx context.Context) ([]int, error) {
	return topicPartitions(ctx, b.client, b.o.Topic)
}

// topicPartitions lists a topic's partitions.
func topicPartitions(ctx context.Context, client *kafka.Client, topic string) ([]int, error) {
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("partitions of %s: %w", topic, err)
	}
	for _, t := range md.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			return nil, fmt.Errorf("partitions of %s: %w", topic, t.Error)
		}
		ps := make([]int, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			ps = append(ps, p.ID)
		}
		if len(ps) == 0 {
			return nil, fmt.Errorf("partitions of %s: none", topic)
		}
		return ps, nil
	}
	return nil, fmt.Errorf("partitions of %s: no such topic", topic)
}

// add starts reading partition p at offset, unless it is read already.
func (b *broadcastReader) add(p int, offset int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.readers[p]; ok || b.ctx.Err() != nil {
		return nil
	}
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:        b.o.Brokers,
		Dialer:         b.o.Security.Dialer(),
		Topic:          b.o.Topic,
		Partition:      p,
		MinBytes:       1,
		MaxBytes:       16 << 20,
		MaxWait:        100 * time.Millisecond,
		ReadBackoffMin: 50 * time.Millisecond,
		ReadBackoffMax: 500 * time.Millisecond,
		ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
			text := fmt.Sprintf(msg, args...)
			b.o.Logger.Debug("kafka reader: "+text, "topic", b.o.Topic, "partition", p)
			if b.o.readerError != nil {
				b.o.readerError(text)
			}
		}),
	})
	if err := r.SetOffset(offset); err != nil {
		_ = r.Close()
		return fmt.Errorf("read %s/%d from %d: %w", b.o.Topic, p, offset, err)
	}
	b.readers[p] = r
	if offset >= 0 {
		b.next[p] = offset
	}
	b.wg.Add(1)
	go b.pump(r)
	return nil
}

// pump moves one partition's records to msgs until Close.
func (b *broadcastReader) pump(r *kafka.Reader) {
	defer b.wg.Done()
	for {
		m, err := r.FetchMessage(b.ctx)
		if err != nil {
			if b.ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return
			}
			b.o.Logger.Warn("broadcast read failed; retrying", "topic", b.o.Topic, "error", b.o.Security.explain(err))
			select {
			case <-b.ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		select {
		case b.msgs <- m:
		case <-b.ctx.Done():
			return
		}
	}
}

// watch adds partitions created after the start, read from their first record.
func (b *broadcastReader) watch() {
	defer b.wg.Done()
	t := time.NewTicker(partitionWatch)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
		}
		parts, err := b.partitions(b.ctx)
		if err != nil {
			continue
		}
		for _, p := range parts {
			if err := b.add(p, kafka.FirstOffset); err != nil {
				b.o.Logger.Warn("broadcast: new partition not read", "topic", b.o.Topic, "partition", p, "error", err)
			}
		}
	}
}

// FetchMessage returns the next record of any partition.
func (b *broadcastReader) FetchMessage(ctx context.Context) (kafka.Message, error) {
	for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, 5*time.Second) {
		b.mu.Lock()
		started := b.started
		b.mu.Unlock()
		if started {
			break
		}
		err := b.start(ctx)
		if err == nil {
			b.mu.Lock()
			b.started = true
			b.mu.Unlock()
			break
		}
		b.o.Logger.Warn("broadcast consumer not started; retrying", "topic", b.o.Topic, "error", b.o.Security.explain(err))
		select {
		case <-ctx.Done():
			return kafka.Message{}, ctx.Err()
		case <-time.After(backoff):
		}
	}
	select {
	case m := <-b.msgs:
		return m, nil
	case <-ctx.Done():
		return kafka.Message{}, ctx.Err()
	}
}

// CommitMessages commits nothing to the broker (a broadcast consumer keeps no offsets there); it
// notes each partition's next offset for positions.
func (b *broadcastReader) CommitMessages(_ context.Context, msgs ...kafka.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range msgs {
		if n, ok := b.next[m.Partition]; !ok || m.Offset+1 > n {
			b.next[m.Partition] = m.Offset + 1
		}
	}
	return nil
}

// positions returns, by partition, the offset after the last committed record (or where
// reading started); errNotStarted before the reader has positioned itself.
func (b *broadcastReader) positions() (map[int]int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.started {
		return nil, errNotStarted
	}
	out := make(map[int]int64, len(b.next))
	for p, n := range b.next {
		out[p] = n
	}
	return out, nil
}

var errNotStarted = errors.New("broadcast reader not started")

// Close stops every partition's reader.
func (b *broadcastReader) Close() error {
	b.cancel()
	b.mu.Lock()
	rs := make([]*kafka.Reader, 0, len(b.readers))
	for _, r := range b.readers {
		rs = append(rs, r)
	}
	b.mu.Unlock()
	var errs []error
	for _, r := range rs {
		errs = append(errs, r.Close())
	}
	b.wg.Wait()
	return errors.Join(errs...)
}
