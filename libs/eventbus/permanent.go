package eventbus

import (
	"context"
	"errors"

	"github.com/segmentio/kafka-go"
)

// permanentCodes are the broker's answers about a record that retrying the same record cannot
// change: it is too large (for the writer's batch or the broker's message.max.bytes), its topic
// name is invalid, or the broker refuses its contents. CORRUPT_MESSAGE (kafka.InvalidMessage) is
// not among them: Kafka counts it retriable, as a record damaged on the way arrives whole when
// sent again. Refusals an operator fixes without touching the records (authorization, a missing
// topic, quotas) are not either: the records go through once fixed.
var permanentCodes = []kafka.Error{kafka.MessageSizeTooLarge, kafka.RecordListTooLarge, kafka.InvalidTopic, kafka.InvalidRecord}

// Permanent reports whether err, from Publish, means the brokers refuse at least one of the
// records for good: publishing the same records again can never succeed, so a caller that
// retries them must set the refused ones apart (Isolate) rather than retry forever.
// kafka-go's MessageTooLargeError (a record over the writer's batch size, refused before
// anything was sent) is permanent. Any other error (a broker away, a leader moving, a timeout)
// is worth retrying.
func Permanent(err error) bool {
	if err == nil {
		return false
	}
	var werr kafka.WriteErrors
	if errors.As(err, &werr) {
		for _, e := range werr {
			if e != nil && permanentCode(e) {
				return true
			}
		}
		return false
	}
	return permanentCode(err)
}

func permanentCode(err error) bool {
	for _, code := range permanentCodes {
		if errors.Is(err, code) {
			return true
		}
	}
	return false
}

// Publishing is what Isolate publishes through: a Publisher, or a wrapper of one.
type Publishing interface {
	Publish(ctx context.Context, events ...Event) error
}

// Isolate publishes events through pub in order, setting apart those the brokers refuse for
// good (Permanent), so that one such record does not hold back the others. A refused call is
// split in halves, the first published (or split further) before the second, down to single
// events: an event is refused only when, published alone, the brokers refuse it. That matters
// because a broker refuses a whole record batch for one record too large in it, naming every
// record of the batch, so the per-record errors cannot be trusted to single it out.
//
// It returns the refused events, in order, and how many events, from the
// first, were published or refused (done). A failure that is not permanent stops it and is
// returned: events from done on are to be published again. The events of a key keep their
// order: a split publishes again, after it, events the refused call may have written, with
// their event ids, so the last copy of each key's events still comes in order, and consumers
// drop the repeats by event id, as after any failed publish.
func Isolate(ctx context.Context, pub Publishing, events []Event) (refused []Refused, done int, err error) {
	err = isolate(ctx, pub, events, 0, &refused)
	if err != nil {
		var stopped isolateStop
		if errors.As(err, &stopped) {
			return refused, stopped.at, stopped.err
		}
	}
	return refused, len(events), err
}

// Refused is an event the brokers refuse for good: its index in the events given to Isolate,
// and the brokers' answer.
type Refused struct {
	Index int
	Err   error
}

// isolateStop is a failure that is not permanent, at index at of the events.
type isolateStop struct {
	at  int
	err error
}

func (s isolateStop) Error() string { return s.err.Error() }

// isolate publishes events, the ones of the whole call from index base, adding the refused
// ones to refused.
func isolate(ctx context.Context, pub Publishing, events []Event, base int, refused *[]Refused) error {
	err := pub.Publish(ctx, events...)
	switch {
	case err == nil:
		return nil
	case !Permanent(err):
		return isolateStop{at: base, err: err}
	case len(events) == 1:
		return refuseAlone(ctx, pub, events[0], base, err, refused)
	}
	half := len(events) / 2
	if err := isolate(ctx, pub, events[:half], base, refused); err != nil {
		return err
	}
	return isolate(ctx, pub, events[half:], base+half, refused)
}

// aloneAttempts is how many times a single event is published alone before it counts as
// refused. A kafka-go Writer merges concurrent callers' records into one batch per partition,
// so a broker refusing a batch for another caller's oversized record names this one too: a
// refusal that repeats when published alone again is the event's own.
const aloneAttempts = 3

// refuseAlone publishes a single event again after a permanent refusal (err) and adds it to
// refused only when every attempt is refused for good.
func refuseAlone(ctx context.Context, pub Publishing, ev Event, base int, err error, refused *[]Refused) error {
	for i := 1; i < aloneAttempts; i++ {
		err = pub.Publish(ctx, ev)
		switch {
		case err == nil:
			return nil
		case !Permanent(err):
			return isolateStop{at: base, err: err}
		}
	}
	*refused = append(*refused, Refused{Index: base, Err: err})
	return nil
}
