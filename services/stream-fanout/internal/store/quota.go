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

// Op names one lease or return of a replica in Redis: Replica is the replica's id (random per
// process), Seq a number it never uses twice. A call retried with the same Op (its reply was
// lost: a timeout, a dropped connection) does not count again: a lease answers what the first
// call granted, a return gives nothing back a second time. A zero Op is not recorded.
type Op struct {
	Replica string
	Seq     int64
}

// lease: KEYS hour, month, leases, starved; ARGV want, hour limit, month limit, hour end ms,
// month end ms, replica, seq, starve (1: the caller holds no credit).
//
// Grants up to want credits within both limits and counts them: {granted, exhausted window}
// (0 none, 1 hourly, 2 monthly). A want of 0 counts nothing and writes nothing: it only names
// the window used up, which is how Spent reads the same limits without a second copy of them.
// The leases hash keeps each replica's last lease (seq:granted) for the hour, so a retry of it
// answers the recorded grant instead of counting it again. A refusal of a caller holding no
// credit sets the hour's starved flag, which tells the replicas holding credits of the key to
// give them back (their sweep reads it); any grant clears it. Every key written expires at the
// end of its period (hour or month), never later.
var leaseScript = redis.NewScript(`
local want = tonumber(ARGV[1])
if want > 0 and ARGV[6] ~= '' then
  local rec = redis.call('HGET', KEYS[3], ARGV[6])
  if rec then
    local i = string.find(rec, ':', 1, true)
    if string.sub(rec, 1, i - 1) == ARGV[7] then return {tonumber(string.sub(rec, i + 1)), 0} end
  end
end
local h = tonumber(redis.call('GET', KEYS[1]) or '0')
local m = tonumber(redis.call('GET', KEYS[2]) or '0')
local hl, ml = tonumber(ARGV[2]), tonumber(ARGV[3])
local full = 0
if hl > 0 and h >= hl then full = 1 elseif ml > 0 and m >= ml then full = 2 end
if full > 0 then
  if want > 0 and ARGV[8] == '1' then
    redis.call('SET', KEYS[4], '1')
    redis.call('PEXPIREAT', KEYS[4], ARGV[4])
  end
  return {0, full}
end
if want <= 0 then return {0, 0} end
local g = want
if hl > 0 then g = math.min(g, hl - h) end
if ml > 0 then g = math.min(g, ml - m) end
redis.call('INCRBY', KEYS[1], g)
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
redis.call('INCRBY', KEYS[2], g)
redis.call('PEXPIREAT', KEYS[2], ARGV[5])
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[6], ARGV[7] .. ':' .. g)
  redis.call('PEXPIREAT', KEYS[3], ARGV[4])
end
redis.call('DEL', KEYS[4])
return {g, 0}
`)

// giveBack: KEYS hour, month, returns; ARGV n, month end ms, replica, seq.
//
// Records the return first (the replica's highest seq applied this month, in the returns hash)
// and only then decrements, so a retry of a return already applied (same seq) is a no-op and
// creates no credit. A count that no longer exists (its period ended) is not recreated, and none
// goes below zero. A replica's returns of one key reach Redis in seq order (the caller orders
// them), so a seq at or below the one recorded is one already applied, or one given up whose
// credits then stay counted: never a credit made twice.
var giveBackScript = redis.NewScript(`
local seq = tonumber(ARGV[4])
if seq <= tonumber(redis.call('HGET', KEYS[3], ARGV[3]) or '0') then return 0 end
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
redis.call('PEXPIREAT', KEYS[3], ARGV[2])
local n = tonumber(ARGV[1])
for i = 1, 2 do
  local d = math.min(n, tonumber(redis.call('GET', KEYS[i]) or '0'))
  if d > 0 then redis.call('DECRBY', KEYS[i], d) end
end
return 1
`)

// Window is a quota period: the hour and the calendar month (UTC) that t is in.
type Window struct {
	Hour, Month       time.Time
	HourEnd, MonthEnd time.Time
	hourKey, monthKey string
	leasesKey         string // each replica's last lease of the hour
	starvedKey        string // set while a replica holding no credit was refused this hour
	returnsKey        string // each replica's last return of the month
}

// WindowAt is the window of t for keyID.
func (s *Store) WindowAt(keyID string, t time.Time) Window {
	t = t.UTC()
	h := t.Truncate(time.Hour)
	m := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	base, hs, ms := s.prefix+"q:"+keyID, h.Format("2006010215"), m.Format("200601")
	return Window{Hour: h, Month: m, HourEnd: h.Add(time.Hour), MonthEnd: m.AddDate(0, 1, 0),
		hourKey: base + ":h:" + hs, monthKey: base + ":m:" + ms,
		leasesKey: base + ":l:" + hs, starvedKey: base + ":s:" + hs, returnsKey: base + ":r:" + ms}
}

// Lease takes up to want credits of keyID's quota in window w, as op (a retry with the same
// op counts nothing more and answers the first call's grant). granted is 0 when a limit is
// reached; limitType then names it. holding says the caller still holds credits of the key: only
// a refusal of a caller holding none flags the key starved for the other replicas (Starved).
func (s *Store) Lease(ctx context.Context, w Window, l Limits, want int64, op Op, holding bool) (granted int64, limitType string, err error) {
	starve := "1"
	if holding {
		starve = "0"
	}
	v, err := leaseScript.Run(ctx, s.rdb, []string{w.hourKey, w.monthKey, w.leasesKey, w.starvedKey}, max(want, 0), l.Hourly, l.Monthly,
		w.HourEnd.UnixMilli(), w.MonthEnd.UnixMilli(), op.Replica, op.Seq, starve).Int64Slice()
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
	_, limitType, err = s.Lease(ctx, w, l, 0, Op{}, true)
	return limitType, err
}

// Return gives back n credits leased in w and not used, as op: a retry with the same op (its
// reply lost) gives nothing back again.
func (s *Store) Return(ctx context.Context, w Window, n int64, op Op) error {
	if n <= 0 {
		return nil
	}
	return giveBackScript.Run(ctx, s.rdb, []string{w.hourKey, w.monthKey, w.returnsKey}, n, w.MonthEnd.UnixMilli(), op.Replica, op.Seq).Err()
}

// Starved reports, for each window of ws, whether a replica holding no credit of its key was
// refused in its hour since the last grant: one pipelined read for them all.
func (s *Store) Starved(ctx context.Context, ws []Window) ([]bool, error) {
	if len(ws) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.IntCmd, len(ws))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, w := range ws {
			cmds[i] = p.Exists(ctx, w.starvedKey)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(ws))
	for i, c := range cmds {
		out[i] = c.Val() > 0
	}
	return out, nil
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
