package redisx

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Follow calls fn with the payload of each message published on channel until ctx ends (or the
// client is closed), and returns nil. The subscription reconnects by itself, health-checked
// every 5 s; a message published while it is away is missed, so what it carries must also
// reach its followers another way (a TTL, a later message, or a record read by FollowResync's
// resync).
func Follow(ctx context.Context, rdb redis.UniversalClient, channel string, fn func(payload string)) error {
	return FollowResync(ctx, rdb, channel, nil, fn)
}

// FollowResync is Follow that also calls resync (when not nil) each time the subscription is
// established: once at the start and again after every reconnect, before the messages
// received on the new subscription. A follower catches up there on what was published while
// it was away, from a record the publisher keeps beside the channel.
func FollowResync(ctx context.Context, rdb redis.UniversalClient, channel string, resync func(ctx context.Context), fn func(payload string)) error {
	ps := rdb.Subscribe(ctx, channel)
	defer ps.Close()
	ch := ps.ChannelWithSubscriptions(redis.WithChannelHealthCheckInterval(5 * time.Second))
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-ch:
			if !ok {
				return nil
			}
			switch m := m.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" && resync != nil {
					resync(ctx)
				}
			case *redis.Message:
				fn(m.Payload)
			}
		}
	}
}
