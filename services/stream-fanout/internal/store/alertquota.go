package store

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// AlertQuota counts, in Redis and so across the replicas, the transfers each user's alerts
// deliver in a UTC hour, against a limit.
type AlertQuota struct {
	rdb    redis.UniversalClient
	prefix string
	limit  int64
}

// NewAlertQuota returns the quota of limit transfers a user and UTC hour, its keys under prefix.
func NewAlertQuota(rdb redis.UniversalClient, prefix string, limit int64) *AlertQuota {
	return &AlertQuota{rdb: rdb, prefix: prefix, limit: limit}
}

// takeAlerts adds what fits of ARGV[1] transfers under the limit ARGV[2] to the hour's count
// KEYS[1] and answers how many fit; the count lives two hours.
var takeAlerts = redis.NewScript(`
local n, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local give = math.max(0, math.min(n, limit - used))
if give > 0 then
  redis.call('INCRBY', KEYS[1], give)
end
redis.call('EXPIRE', KEYS[1], 7200)
return give
`)

func (q *AlertQuota) key(owner string, at time.Time) string {
	return q.prefix + "alertquota:" + at.UTC().Format("2006010215") + ":" + owner
}

// Take counts up to n transfers of owner's hour at at and returns how many may be delivered
// (0 to n).
func (q *AlertQuota) Take(ctx context.Context, owner string, at time.Time, n int64) (int64, error) {
	got, err := takeAlerts.Run(ctx, q.rdb, []string{q.key(owner, at)}, n, q.limit).Int64()
	if err != nil {
		return 0, fmt.Errorf("alert quota: %w", err)
	}
	return got, nil
}

// Return gives back n transfers of owner's hour at at that were taken and not delivered.
func (q *AlertQuota) Return(ctx context.Context, owner string, at time.Time, n int64) error {
	if err := q.rdb.DecrBy(ctx, q.key(owner, at), n).Err(); err != nil {
		return fmt.Errorf("alert quota: %w", err)
	}
	return nil
}
