// Package feed reads a whole topic on every replica, partition by partition and without a
// consumer group: each replica must see every transfer, and sessions carry their own positions
// (offsets per partition), which a replica taking a session over reads again from.
package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
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
}

// client is a client for the metadata and offsets requests.
func (t Topic) client() *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(t.Brokers...), Timeout: 10 * time.Second, Transport: t.Security.Transport()}
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

// Follow reads every partition in start from its offset there until ctx ends, calling handle
// for each record; records of one partition come in order. handle blocking holds that
// partition's reader back (backpressure): nothing is read ahead beyond the reader's queue.
func (t Topic) Follow(ctx context.Context, start map[int]int64, handle func(kafka.Message)) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(start))
	for p, off := range start {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := t.reader(p, 100*time.Millisecond)
			defer r.Close()
			if err := r.SetOffset(off); err != nil {
				errs <- err
				return
			}
			for {
				m, err := r.FetchMessage(ctx)
				if err != nil {
					if ctx.Err() == nil {
						errs <- fmt.Errorf("read %s/%d: %w", t.Name, p, err)
					}
					return
				}
				handle(m)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// ErrGone means a range's records are no longer on the broker (retention deleted them).
var ErrGone = errors.New("records no longer retained")

// Range reads partition part from offset from up to (not including) to, in order.
func (t Topic) Range(ctx context.Context, part int, from, to int64, handle func(kafka.Message)) error {
	if from >= to {
		return nil
	}
	r := t.reader(part, 50*time.Millisecond)
	defer r.Close()
	if err := r.SetOffset(from); err != nil {
		return err
	}
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if errors.Is(err, kafka.OffsetOutOfRange) {
				return ErrGone
			}
			return fmt.Errorf("read %s/%d from %d: %w", t.Name, part, from, err)
		}
		if m.Offset >= to {
			return nil
		}
		if m.Offset >= from {
			handle(m)
		}
		if m.Offset == to-1 {
			return nil
		}
	}
}
