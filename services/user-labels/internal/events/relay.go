// Package events publishes the user-labels service's change events: the outbox relay (see
// libs/outbox) moves the rows the store writes (in the same transaction as each change) to
// Kafka's user.changes.v1 and marks them sent, so a change is published if and only if it
// committed.
package events

import (
	"github.com/chainintel/chainintel/libs/outbox"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"google.golang.org/protobuf/proto"
)

// NewRelay returns the relay of the store's outbox: UserChange records of user.changes.v1.
func NewRelay(st outbox.Store, pub outbox.Publisher, o outbox.Options) *outbox.Relay {
	return outbox.NewRelay(st, pub, outbox.Messages{
		eventsv1.TopicUserChanges: func() proto.Message { return &eventsv1.UserChange{} },
	}, o)
}
