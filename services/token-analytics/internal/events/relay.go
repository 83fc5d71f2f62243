package events

import (
	"github.com/chainintel/chainintel/libs/outbox"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"google.golang.org/protobuf/proto"
)

// NewRelay returns the relay of the store's outbox (see libs/outbox): the token registry's
// MarketToken records and the Price records the store writes in the same transaction as each
// change.
func NewRelay(st outbox.Store, pub outbox.Publisher, o outbox.Options) *outbox.Relay {
	return outbox.NewRelay(st, pub, outbox.Messages{
		eventsv1.TopicMarketTokens: func() proto.Message { return &eventsv1.MarketToken{} },
		eventsv1.TopicPrices:       func() proto.Message { return &eventsv1.Price{} },
	}, o)
}
