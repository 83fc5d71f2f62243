package redisx

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Follow calls fn with the payload of each message published on channel until ctx ends (or the
// client is closed), and returns nil. The subscription reconnects by itself, health-checked
// every 5 s; a message published while it is away is missed, so what it carries must also
// reach its followers another way (a TTL, a later message).
func Follow(ctx context.Context, rdb redis.UniversalClient, channel string, fn func(payload string)) error {
	ps := rdb.Subscribe(ctx, channel)
	defer ps.Close()
	ch := ps.Channel(redis.WithChannelHealthCheckInterval(5 * time.Second))
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-ch:
			if !ok {
				return nil
			}
			fn(m.Payload)
		}
	}
}
