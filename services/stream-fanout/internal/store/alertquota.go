package store

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// AlertQuota counts, in Redis and so across the replicas, the transfers each user's alerts
// deliver in a UTC hour and in a UTC month, against a limit for each.
type AlertQuota struct {
	rdb             redis.UniversalClient
	prefix          string
	hourly, monthly int64
}

// The reasons AlertQuota.Admit names for a refusal: the limit that left no room.
const (
	AlertHourlyLimit  = "hourly_limit"
	AlertMonthlyLimit = "monthly_limit"
)

// NewAlertQuota returns the quota of hourly transfers a user and UTC hour and monthly a user and
// UTC month, its keys under prefix.
func NewAlertQuota(rdb redis.UniversalClient, prefix string, hourly, monthly int64) *AlertQuota {
	return &AlertQuota{rdb: rdb, prefix: prefix, hourly: hourly, monthly: monthly}
}

// takeAlerts adds what fits of ARGV[1] transfers under both the hour's limit ARGV[2] (count
// KEYS[1], kept two hours) and the month's ARGV[3] (KEYS[2], kept 32 days) to both counts, and
// answers {how many fit, which limit refused the rest: 0 none, 1 the hour, 2 the month}. When
// both leave the same room short of ARGV[1] the month is named: it is what lasts.
var takeAlerts = redis.NewScript(`
local n, hlimit, mlimit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local hroom = math.max(0, hlimit - tonumber(redis.call('GET', KEYS[1]) or '0'))
local mroom = math.max(0, mlimit - tonumber(redis.call('GET', KEYS[2]) or '0'))
local give = math.min(n, hroom, mroom)
if give > 0 then
  redis.call('INCRBY', KEYS[1], give)
  redis.call('INCRBY', KEYS[2], give)
end
redis.call('EXPIRE', KEYS[1], 7200)
redis.call('EXPIRE', KEYS[2], 2764800)
local why = 0
if give < n then
  if mroom <= hroom then why = 2 else why = 1 end
end
return {give, why}
`)

// returnAlerts takes ARGV[1] back from the counts KEYS that still exist (one expired is not
// made again, without an expiry).
var returnAlerts = redis.NewScript(`
for _, k in ipairs(KEYS) do
  if redis.call('EXISTS', k) == 1 then redis.call('DECRBY', k, ARGV[1]) end
end
return 0
`)

// keys are owner's hour and month counts at at. The owner is the keys' hash tag, so the two
// are in one slot of a cluster, as a script needs.
func (q *AlertQuota) keys(owner string, at time.Time) []string {
	at = at.UTC()
	base := q.prefix + "alertquota:{" + owner + "}:"
	return []string{base + at.Format("2006010215"), base + at.Format("200601")}
}

// Admit counts up to n transfers of owner's hour and month at at and returns how many may be
// delivered (0 to n) and, when fewer than n, the limit that refused the rest
// (AlertHourlyLimit or AlertMonthlyLimit; "" when all fit). The limits are the quota's, or
// tier's where lower (a tier's 0 is none: the quota's).
func (q *AlertQuota) Admit(ctx context.Context, owner string, at time.Time, n int64, tier Limits) (int64, string, error) {
	got, err := takeAlerts.Run(ctx, q.rdb, q.keys(owner, at), n, least(q.hourly, tier.Hourly), least(q.monthly, tier.Monthly)).Int64Slice()
	if err != nil {
		return 0, "", fmt.Errorf("alert quota: %w", err)
	}
	if len(got) != 2 {
		return 0, "", fmt.Errorf("alert quota: answer %v", got)
	}
	switch got[1] {
	case 1:
		return got[0], AlertHourlyLimit, nil
	case 2:
		return got[0], AlertMonthlyLimit, nil
	}
	return got[0], "", nil
}

// Return gives back n transfers of owner's hour and month at at that were taken and not
// delivered.
func (q *AlertQuota) Return(ctx context.Context, owner string, at time.Time, n int64) error {
	if err := returnAlerts.Run(ctx, q.rdb, q.keys(owner, at), n).Err(); err != nil {
		return fmt.Errorf("alert quota: %w", err)
	}
	return nil
}

// least is limit, or tier where it is a limit (above 0) and lower.
func least(limit, tier int64) int64 {
	if tier > 0 && tier < limit {
		return tier
	}
	return limit
}
