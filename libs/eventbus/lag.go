package eventbus

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
)

// lagReader reads a consumer's lag from the broker: the records between each partition's end
// (its high watermark) and the consumer's position in it, summed over the topic's partitions.
// A round asks for the topic's partitions, each partition's end (kafka-go sends one offsets
// request per partition), the group's committed offsets (with a coordinator lookup) and, for a
// partition nothing was committed in, its first offset: a few small requests per partition
// every interval, for each member of a group, whatever the records' rate. Read on a clock apart from
// the batches, it keeps growing while a handler is stuck on one batch (a lock wait, a failing
// database), when nothing is committed.
type lagReader struct {
	client *kafka.Client
	topic  string
	// positions returns the offset after the last committed record by partition (none for a
	// partition nothing was committed in yet).
	positions func(ctx context.Context, partitions []int) (map[int]int64, error)
	// fromEnd: a partition without a position counts no lag (a group that starts at the
	// newest offset); otherwise every record still in it counts.
	fromEnd bool

	value atomic.Int64
	known atomic.Bool // value was read at least once
	// readAt is when value was last read (Unix nanoseconds), 0 before the first read.
	readAt atomic.Int64
}

// groupPositions are a consumer group's committed offsets: the whole group's, whichever member
// reads which partition, so every member reports the same lag across rebalances.
func groupPositions(client *kafka.Client, topic, group string) func(context.Context, []int) (map[int]int64, error) {
	return func(ctx context.Context, parts []int) (map[int]int64, error) {
		resp, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: parts}})
		if err != nil {
			return nil, fmt.Errorf("committed offsets of %s in %s: %w", group, topic, err)
		}
		out := map[int]int64{}
		// A group that has not joined or committed yet has no committed offsets; some brokers
		// say so with GROUP_ID_NOT_FOUND rather than an empty answer. Not a broker failure.
		if errors.Is(resp.Error, kafka.GroupIdNotFound) {
			return out, nil
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("committed offsets of %s in %s: %w", group, topic, resp.Error)
		}
		for _, p := range resp.Topics[topic] {
			if p.Error != nil {
				return nil, fmt.Errorf("committed offset of %s in %s/%d: %w", group, topic, p.Partition, p.Error)
			}
			if p.CommittedOffset >= 0 {
				out[p.Partition] = p.CommittedOffset
			}
		}
		return out, nil
	}
}

// read returns the lag now.
func (l *lagReader) read(ctx context.Context) (int64, error) {
	parts, err := topicPartitions(ctx, l.client, l.topic)
	if err != nil {
		return 0, err
	}
	ends, err := l.offsets(ctx, parts, kafka.LastOffset)
	if err != nil {
		return 0, err
	}
	pos, err := l.positions(ctx, parts)
	if err != nil {
		return 0, err
	}
	var unread []int
	for _, p := range parts {
		if _, ok := pos[p]; !ok {
			unread = append(unread, p)
		}
	}
	if len(unread) > 0 && !l.fromEnd {
		// Asked apart from the ends: a broker refuses a partition twice in one request.
		firsts, err := l.offsets(ctx, unread, kafka.FirstOffset)
		if err != nil {
			return 0, err
		}
		for p, off := range firsts {
			pos[p] = off
		}
	}
	var lag int64
	for _, p := range parts {
		if at, ok := pos[p]; ok {
			lag += max(0, ends[p]-at)
		}
	}
	return lag, nil
}

// offsets returns the first or the last (high watermark) offset of each partition.
func (l *lagReader) offsets(ctx context.Context, parts []int, which int64) (map[int]int64, error) {
	reqs := make([]kafka.OffsetRequest, len(parts))
	for i, p := range parts {
		reqs[i] = kafka.OffsetRequest{Partition: p, Timestamp: which}
	}
	resp, err := l.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{l.topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("offsets of %s: %w", l.topic, err)
	}
	out := make(map[int]int64, len(parts))
	for _, po := range resp.Topics[l.topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("offsets of %s/%d: %w", l.topic, po.Partition, po.Error)
		}
		if which == kafka.FirstOffset {
			out[po.Partition] = po.FirstOffset
		} else {
			out[po.Partition] = po.LastOffset
		}
	}
	for _, p := range parts {
		if _, ok := out[p]; !ok {
			return nil, fmt.Errorf("offsets of %s/%d: not in the broker's answer", l.topic, p)
		}
	}
	return out, nil
}

// run reads the lag every interval until ctx ends. A failed read (the broker away, a group
// coordinator moving) keeps the last value and readAt, whose age eventbus_consumer_lag_age_seconds
// reports, and is handed to failed.
func (l *lagReader) run(ctx context.Context, interval time.Duration, failed func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, max(interval, 10*time.Second))
		lag, err := l.read(rctx)
		cancel()
		switch {
		case err == nil:
			l.value.Store(lag)
			l.known.Store(true)
			l.readAt.Store(time.Now().UnixNano())
		case ctx.Err() == nil:
			failed(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
