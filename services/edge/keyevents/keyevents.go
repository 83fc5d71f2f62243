// Package keyevents is the edge's key invalidations (a revoke, a tier change) as other services
// follow them: the hex key hashes published on a Redis channel, and beside it a record of the
// recent ones, so a follower whose subscription was away (a Redis failover, a network cut) can
// catch up on what it missed when it subscribes again. The edge writes both in one transaction
// (Record); stream-fanout reads the record on every (re)subscribe (Recent). The layout lives
// only here.
package keyevents

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultChannel is the edge's invalidation channel.
const DefaultChannel = "edge:keys:invalidate"

// Retention is how long the record keeps an invalidation: a follower away for longer misses
// what was published before its last Retention.
const Retention = 24 * time.Hour

// recordKey names the record of channel's invalidations: a sorted set of hex key hashes scored
// by the unix ms of each one's latest invalidation.
func recordKey(channel string) string { return channel + ":recent" }

// Record queues, on p (a MULTI pipeline, with the publish of the same hashes), the record of
// hashes invalidated at now, and drops what is older than Retention.
func Record(ctx context.Context, p redis.Pipeliner, channel string, hashes []string, now time.Time) {
	k := recordKey(channel)
	zs := make([]redis.Z, len(hashes))
	for i, h := range hashes {
		zs[i] = redis.Z{Score: float64(now.UnixMilli()), Member: h}
	}
	p.ZAdd(ctx, k, zs...)
	p.ZRemRangeByScore(ctx, k, "-inf", "("+strconv.FormatInt(now.Add(-Retention).UnixMilli(), 10))
	p.Expire(ctx, k, Retention)
}

// Recent returns the hex hashes invalidated on channel since since (at most Retention ago),
// each with the time of its latest invalidation.
func Recent(ctx context.Context, rdb redis.Cmdable, channel string, since time.Time) (map[string]time.Time, error) {
	zs, err := rdb.ZRangeByScoreWithScores(ctx, recordKey(channel), &redis.ZRangeBy{
		Min: strconv.FormatInt(since.UnixMilli(), 10), Max: "+inf",
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("read the recent key invalidations: %w", err)
	}
	out := make(map[string]time.Time, len(zs))
	for _, z := range zs {
		if h, ok := z.Member.(string); ok {
			out[h] = time.UnixMilli(int64(z.Score))
		}
	}
	return out, nil
}
