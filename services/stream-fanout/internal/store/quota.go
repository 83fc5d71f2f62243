package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/services/edge/ledger"
	"github.com/redis/go-redis/v9"
)

// Limits are a tier's stream quotas; 0 means none.
type Limits struct{ Hourly, Monthly int64 }

// Windows a quota counts in.
const (
	LimitHourly  = "hourly"
	LimitMonthly = "monthly"
)

// lease: KEYS hour, month; ARGV want, hour limit, month limit, hour ttl ms, month ttl ms.
// Grants up to want credits within both limits and counts them; {granted, exhausted window}
// (0 none, 1 hourly, 2 monthly). A want of 0 counts nothing and writes nothing: it only names
// the window used up, which is how Spent reads the same limits without a second copy of them.
var leaseScript = redis.NewScript(`
local want = tonumber(ARGV[1])
local h = tonumber(redis.call('GET', KEYS[1]) or '0')
local m = tonumber(redis.call('GET', KEYS[2]) or '0')
local hl, ml = tonumber(ARGV[2]), tonumber(ARGV[3])
if hl > 0 and h >= hl then return {0, 1} end
if ml > 0 and m >= ml then return {0, 2} end
local g = want
if hl > 0 then g = math.min(g, hl - h) end
if ml > 0 then g = math.min(g, ml - m) end
if g <= 0 then return {0, 0} end
redis.call('INCRBY', KEYS[1], g)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('INCRBY', KEYS[2], g)
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return {g, 0}
`)

// Window is a quota period: the hour and the calendar month (UTC) that t is in.
type Window struct {
	Hour, Month       time.Time
	HourEnd, MonthEnd time.Time
	hourKey, monthKey string
}

// WindowAt is the window of t for keyID.
func (s *Store) WindowAt(keyID string, t time.Time) Window {
	t = t.UTC()
	h := t.Truncate(time.Hour)
	m := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return Window{Hour: h, Month: m, HourEnd: h.Add(time.Hour), MonthEnd: m.AddDate(0, 1, 0),
		hourKey:  s.prefix + "q:" + keyID + ":h:" + h.Format("2006010215"),
		monthKey: s.prefix + "q:" + keyID + ":m:" + m.Format("200601")}
}

// Lease takes up to want credits of keyID's quota in window w. granted is 0 when a limit is
// reached; limitType then names it.
func (s *Store) Lease(ctx context.Context, w Window, l Limits, want int64) (granted int64, limitType string, err error) {
	v, err := leaseScript.Run(ctx, s.rdb, []string{w.hourKey, w.monthKey}, max(want, 0), l.Hourly, l.Monthly,
		(2 * time.Hour).Milliseconds(), (32 * 24 * time.Hour).Milliseconds()).Int64Slice()
	if err != nil {
		return 0, "", err
	}
	if len(v) != 2 {
		return 0, "", fmt.Errorf("lease: unexpected reply %v", v)
	}
	switch v[1] {
	case 1:
		return 0, LimitHourly, nil
	case 2:
		return 0, LimitMonthly, nil
	}
	return v[0], "", nil
}

// Spent names the limit of w that the credits counted (leased) have used up, "" for neither:
// what Lease would find, read by the lease script itself leasing nothing, so a check that finds
// credits left leaves none counted.
func (s *Store) Spent(ctx context.Context, w Window, l Limits) (limitType string, err error) {
	_, limitType, err = s.Lease(ctx, w, l, 0)
	return limitType, err
}

// Return gives back n leased credits not used.
func (s *Store) Return(ctx context.Context, w Window, n int64) error {
	if n <= 0 {
		return nil
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.DecrBy(ctx, w.hourKey, n)
		p.DecrBy(ctx, w.monthKey, n)
		return nil
	})
	return err
}

// connect: KEYS conns; ARGV now, expiry, limit, conn id. It returns {admitted (1 or 0), the
// server's TIME seconds, microseconds}.
var connectScript = redis.NewScript(`
local t = redis.call('TIME')
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if tonumber(ARGV[3]) > 0 and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return {0, t[1], t[2]} end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], 3600000)
return {1, t[1], t[2]}
`)

func (s *Store) ckey(keyID string) string { return s.prefix + "c:" + keyID }

// Connect counts connection conn of keyID for ttl, unless keyID already has limit live ones. It
// also returns the Redis server's time of the call: the clock the edge's key invalidations are
// recorded by (keyevents), which a connection's admission is compared with.
func (s *Store) Connect(ctx context.Context, keyID, conn string, limit int, ttl time.Duration) (ok bool, at time.Time, err error) {
	now := s.now()
	v, err := connectScript.Run(ctx, s.rdb, []string{s.ckey(keyID)}, now.UnixMilli(), now.Add(ttl).UnixMilli(), limit, conn).Int64Slice()
	if err != nil {
		return false, time.Time{}, err
	}
	if len(v) != 3 {
		return false, time.Time{}, fmt.Errorf("connect: unexpected reply %v", v)
	}
	return v[0] == 1, time.Unix(v[1], v[2]*1000), nil
}

// HeartbeatAll keeps every connection of conns (connection ids by key id) counted for ttl
// more, in one pipelined round trip rather than one call per connection.
func (s *Store) HeartbeatAll(ctx context.Context, conns map[string][]string, ttl time.Duration) error {
	if len(conns) == 0 {
		return nil
	}
	score := float64(s.now().Add(ttl).UnixMilli())
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for keyID, ids := range conns {
			zs := make([]redis.Z, len(ids))
			for i, id := range ids {
				zs[i] = redis.Z{Score: score, Member: id}
			}
			p.ZAddXX(ctx, s.ckey(keyID), zs...)
		}
		return nil
	})
	return err
}

// Disconnect stops counting conn.
func (s *Store) Disconnect(ctx context.Context, keyID, conn string) error {
	return s.rdb.ZRem(ctx, s.ckey(keyID), conn).Err()
}

// Connections is how many live connections keyID has.
func (s *Store) Connections(ctx context.Context, keyID string) (int64, error) {
	return s.rdb.ZCount(ctx, s.ckey(keyID), "("+itoa(s.now().UnixMilli()), "+inf").Result()
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// LedgerUsed reads the credits used of each of the edge's live credit ledger hashes named
// (ledger.Key), in one round trip; -1 for a hash that does not exist (no figure yet this period).
func (s *Store) LedgerUsed(ctx context.Context, names []string) ([]int64, error) {
	return ledger.Used(ctx, s.rdb, names)
}
