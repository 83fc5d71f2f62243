package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// AlertSent remembers, in Redis and so across the replicas, which transfers each alert
// delivered, for a while: a batch a replica stopped in the middle of is read again by the
// group, and a transfer ingest published twice comes twice; a transfer a webhook already took
// is then neither sent nor charged again, whatever the batch's boundaries the second time.
type AlertSent struct {
	rdb    redis.UniversalClient
	prefix string
	keep   time.Duration
}

// NewAlertSent returns the record of delivered transfers, each kept for keep (at least a
// second), its keys under prefix.
func NewAlertSent(rdb redis.UniversalClient, prefix string, keep time.Duration) *AlertSent {
	return &AlertSent{rdb: rdb, prefix: prefix, keep: max(keep, time.Second)}
}

// sentTaken answers, for each member ARGV[2..] of the sorted set KEYS[1], 1 when it is there,
// after dropping the members recorded before ARGV[1] (ms): those are forgotten.
var sentTaken = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
local out = {}
for i = 2, #ARGV do
  out[#out + 1] = redis.call('ZSCORE', KEYS[1], ARGV[i]) and 1 or 0
end
return out
`)

// sentRecord adds the members ARGV[3..] to the sorted set KEYS[1] at the time ARGV[1] (ms) and
// keeps the set ARGV[2] ms past its newest member.
var sentRecord = redis.NewScript(`
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 0
`)

// key is alert's set: one per alert, so its members need not name it and the set goes when the
// alert stops matching.
func (s *AlertSent) key(alert int64) string {
	return s.prefix + "alertsent:{" + strconv.FormatInt(alert, 10) + "}"
}

func members(ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// Sent reports, for each transfer of ids (an identity of a transfer in its block, as the
// caller forms it), whether alert delivered it within the time kept (as of now).
func (s *AlertSent) Sent(ctx context.Context, alert int64, ids []string, now time.Time) ([]bool, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := append([]any{now.Add(-s.keep).UnixMilli()}, members(ids)...)
	got, err := sentTaken.Run(ctx, s.rdb, []string{s.key(alert)}, args...).Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("alert sent: %w", err)
	}
	if len(got) != len(ids) {
		return nil, fmt.Errorf("alert sent: %d answers for %d transfers", len(got), len(ids))
	}
	out := make([]bool, len(ids))
	for i, v := range got {
		out[i] = v == 1
	}
	return out, nil
}

// Record records that alert delivered the transfers ids at now.
func (s *AlertSent) Record(ctx context.Context, alert int64, ids []string, now time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	args := append([]any{now.UnixMilli(), s.keep.Milliseconds()}, members(ids)...)
	if err := sentRecord.Run(ctx, s.rdb, []string{s.key(alert)}, args...).Err(); err != nil {
		return fmt.Errorf("alert sent: %w", err)
	}
	return nil
}
