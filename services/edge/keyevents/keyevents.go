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
// by the unix ms of each one's latest invalidation, by the Redis server's clock.
func recordKey(channel string) string { return channel + ":recent" }

// record: KEYS record; ARGV retention ms, hashes... Scored by the server's TIME, so the
// revoking process's clock does not matter: stream-fanout compares the score with its
// connections' admission times, read from the same server (see its store.Connect).
var recordScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], now, ARGV[i])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[1])))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return now
`)

// Record queues, on p (a MULTI pipeline, with the publish of the same hashes), the record of
// hashes invalidated now by the Redis server's clock, and drops what is older than Retention.
func Record(ctx context.Context, p redis.Pipeliner, channel string, hashes []string) {
	args := make([]any, 0, len(hashes)+1)
	args = append(args, Retention.Milliseconds())
	for _, h := range hashes {
		args = append(args, h)
	}
	// EVAL, not EVALSHA: inside MULTI a missing script cannot be retried with its body.
	recordScript.Eval(ctx, p, []string{recordKey(channel)}, args...)
}

// Recent returns the hex hashes invalidated on channel since since (at most Retention ago),
// each with the time of its latest invalidation, and the Redis server's time of the read: the
// clock those times are by.
func Recent(ctx context.Context, rdb redis.Cmdable, channel string, since time.Time) (map[string]time.Time, time.Time, error) {
	var now *redis.TimeCmd
	var zs *redis.ZSliceCmd
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		now = p.Time(ctx)
		zs = p.ZRangeByScoreWithScores(ctx, recordKey(channel), &redis.ZRangeBy{
			Min: strconv.FormatInt(since.UnixMilli(), 10), Max: "+inf",
		})
		return nil
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read the recent key invalidations: %w", err)
	}
	out := make(map[string]time.Time, len(zs.Val()))
	for _, z := range zs.Val() {
		if h, ok := z.Member.(string); ok {
			out[h] = time.UnixMilli(int64(z.Score))
		}
	}
	return out, now.Val(), nil
}
