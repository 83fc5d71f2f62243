package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// AlertSuspensions are the webhooks (alert methods) not POSTed to for a while after a delivery
// to them was given up, kept in Redis so every replica, and one started since, skips them:
// otherwise each replica would spend a retry window on a webhook another found failing.
type AlertSuspensions struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewAlertSuspensions returns the suspensions, their keys under prefix.
func NewAlertSuspensions(rdb redis.UniversalClient, prefix string) *AlertSuspensions {
	return &AlertSuspensions{rdb: rdb, prefix: prefix}
}

func (s *AlertSuspensions) key(method int64) string {
	return s.prefix + "alertsuspended:" + strconv.FormatInt(method, 10)
}

// Suspend suspends method for d from now.
func (s *AlertSuspensions) Suspend(ctx context.Context, method int64, d time.Duration) error {
	if err := s.rdb.SetArgs(ctx, s.key(method), "1", redis.SetArgs{TTL: max(d, time.Millisecond)}).Err(); err != nil {
		return fmt.Errorf("alert suspension: %w", err)
	}
	return nil
}

// Suspended reports whether method is suspended and, if so, for how much longer.
func (s *AlertSuspensions) Suspended(ctx context.Context, method int64) (time.Duration, error) {
	ttl, err := s.rdb.PTTL(ctx, s.key(method)).Result()
	if err != nil {
		return 0, fmt.Errorf("alert suspension: %w", err)
	}
	return max(ttl, 0), nil // -2: none; -1 cannot be (always set with an expiry)
}
