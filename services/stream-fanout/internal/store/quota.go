package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

// period is the Lua that names the quota period a script counts in from the Redis server's
// clock (redis.call('TIME'), or ARGV[pa] when the store has a PeriodClock): the replicas'
// clocks never decide it, so a replica whose clock is off cannot write counts that Redis
// expires at once, nor count in another hour than the other replicas. It sets now (ms), hs
// (the hour's start, s), he and me (the hour's and the month's ends, ms) and hk, mk (the
// hour's and the month's key suffixes), as WindowAt names them.
const periodLua = `
local now
if ARGV[PA] ~= '' then now = tonumber(ARGV[PA]) else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local secs = math.floor(now / 1000)
local days = math.floor(secs / 86400)
local hs = days * 86400 + math.floor((secs - days * 86400) / 3600) * 3600
local function civil(z)
  z = z + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return y, m, d
end
local function daysOf(y, m)
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = m > 2 and m - 3 or m + 9
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + math.floor((153 * mp + 2) / 5)
  return era * 146097 + doe - 719468
end
local y, m, d = civil(days)
local ny, nm = y, m + 1
if nm > 12 then ny, nm = y + 1, 1 end
local he, me = (hs + 3600) * 1000, daysOf(ny, nm) * 86400000
local hk = string.format('%04d%02d%02d%02d', y, m, d, math.floor((hs - days * 86400) / 3600))
local mk = string.format('%04d%02d', y, m)
`

// lease: KEYS the key's quota base (its period keys are named from it: base:h:<hour>,
// base:m:<month>, base:s:<hour>, and base:l the replicas' last leases); ARGV want, hour limit,
// month limit, replica, seq, starve (1: the caller holds no credit), period clock ms (empty for
// the server's TIME).
//
// Grants up to want credits within both limits of the current period and counts them:
// {granted, exhausted window (0 none, 1 hourly, 2 monthly), the period's hour start (s), the
// time the script read (ms)}. A want of 0 counts nothing and writes nothing: it only names
// the window used up, which is how Spent reads the same limits without a second copy of them.
// The leases hash keeps each replica's last lease (seq:granted:hour start) for the month and an
// hour past it, whatever hour it was granted in, so a retry of it, even after the hour or the
// month turned, answers the recorded grant and its period instead of counting it again. A
// refusal of a caller holding no credit sets the hour's starved flag, which tells the replicas
// holding credits of the key to give them back (their sweep reads it); any grant clears it.
// The counts and the flag expire at the end of their period, never later.
var leaseScript = redis.NewScript(strings.ReplaceAll(periodLua, "ARGV[PA]", "ARGV[7]") + `
local base = KEYS[1]
local want = tonumber(ARGV[1])
if want > 0 and ARGV[4] ~= '' then
  local rec = redis.call('HGET', base .. ':l', ARGV[4])
  if rec then
    local i = string.find(rec, ':', 1, true)
    local j = string.find(rec, ':', i + 1, true)
    if string.sub(rec, 1, i - 1) == ARGV[5] then
      return {tonumber(string.sub(rec, i + 1, j - 1)), 0, tonumber(string.sub(rec, j + 1)), now}
    end
  end
end
local hkey, mkey, skey = base .. ':h:' .. hk, base .. ':m:' .. mk, base .. ':s:' .. hk
local h = tonumber(redis.call('GET', hkey) or '0')
local mc = tonumber(redis.call('GET', mkey) or '0')
local hl, ml = tonumber(ARGV[2]), tonumber(ARGV[3])
local full = 0
if hl > 0 and h >= hl then full = 1 elseif ml > 0 and mc >= ml then full = 2 end
if full > 0 then
  if want > 0 and ARGV[6] == '1' then
    redis.call('SET', skey, '1')
    redis.call('PEXPIREAT', skey, he)
  end
  return {0, full, hs, now}
end
if want <= 0 then return {0, 0, hs, now} end
local g = want
if hl > 0 then g = math.min(g, hl - h) end
if ml > 0 then g = math.min(g, ml - mc) end
redis.call('INCRBY', hkey, g)
redis.call('PEXPIREAT', hkey, he)
redis.call('INCRBY', mkey, g)
redis.call('PEXPIREAT', mkey, me)
if ARGV[4] ~= '' then
  redis.call('HSET', base .. ':l', ARGV[4], ARGV[5] .. ':' .. g .. ':' .. hs)
  redis.call('PEXPIREAT', base .. ':l', me + 3600000)
end
redis.call('DEL', skey)
return {g, 0, hs, now}
`)

// giveBack: KEYS hour, month, returns; ARGV n, month end ms, replica, seq.
//
// Records the return first (the replica's highest seq applied this month, in the returns hash)
// and only then decrements, so a retry of a return already applied (same seq) is a no-op and
// creates no credit. A count that no longer exists (its period ended) is not recreated, and none
// goes below zero. A replica's returns of one key reach Redis in seq order (the caller orders
// them), so a seq at or below the one recorded is one already applied, or one given up whose
// credits then stay counted: never a credit made twice. The window is one a lease named (the
// period Redis counted it in), so its ends are Redis's.
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
	keyID             string
	Hour, Month       time.Time
	HourEnd, MonthEnd time.Time
	hourKey, monthKey string
	starvedKey        string // set while a replica holding no credit was refused this hour
	returnsKey        string // each replica's last return of the month
}

// WindowAt is the window of t for keyID. The window a key is counted in is the one Lease
// answers (Redis's clock); WindowAt names the keys of a period already known.
func (s *Store) WindowAt(keyID string, t time.Time) Window {
	t = t.UTC()
	h := t.Truncate(time.Hour)
	m := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	base, hs, ms := s.qbase(keyID), h.Format("2006010215"), m.Format("200601")
	return Window{keyID: keyID, Hour: h, Month: m, HourEnd: h.Add(time.Hour), MonthEnd: m.AddDate(0, 1, 0),
		hourKey: base + ":h:" + hs, monthKey: base + ":m:" + ms,
		starvedKey: base + ":s:" + hs, returnsKey: base + ":r:" + ms}
}

func (s *Store) qbase(keyID string) string { return s.prefix + "q:" + keyID }

// Grant is a lease's answer: N credits granted in window W (the period Redis counted them in,
// by its clock), or none and Limit naming the window used up. At is Redis's time of the call,
// which a replica sets its quota clock by.
type Grant struct {
	N     int64
	Limit string
	W     Window
	At    time.Time
}

// Lease takes up to want credits of keyID's quota in the current period (Redis's clock), as op
// (a retry with the same op counts nothing more and answers the first call's grant, with the
// period it was counted in, even after that period ended). When a limit is reached the grant
// has no credit and Limit names it. holding says the caller still holds credits of the key:
// only a refusal of a caller holding none flags the key starved for the other replicas.
func (s *Store) Lease(ctx context.Context, keyID string, l Limits, want int64, op Op, holding bool) (Grant, error) {
	starve := "1"
	if holding {
		starve = "0"
	}
	seq := ""
	if op.Replica != "" {
		seq = itoa(op.Seq)
	}
	v, err := leaseScript.Run(ctx, s.rdb, []string{s.qbase(keyID)}, max(want, 0), l.Hourly, l.Monthly,
		op.Replica, seq, starve, s.periodArg()).Int64Slice()
	if err != nil {
		return Grant{}, err
	}
	if len(v) != 4 {
		return Grant{}, fmt.Errorf("lease: unexpected reply %v", v)
	}
	g := Grant{N: v[0], W: s.WindowAt(keyID, time.Unix(v[2], 0)), At: time.UnixMilli(v[3]).UTC()}
	switch v[1] {
	case 1:
		g.N, g.Limit = 0, LimitHourly
	case 2:
		g.N, g.Limit = 0, LimitMonthly
	}
	return g, nil
}

// periodArg is the period clock's time for the scripts, or "" for the Redis server's TIME.
func (s *Store) periodArg() string {
	if s.periodNow == nil {
		return ""
	}
	return itoa(s.periodNow().UnixMilli())
}

// Spent names the limit of keyID's current period that the credits counted (leased) have used
// up, "" for neither, and the period: what Lease would find, read by the lease script itself
// leasing nothing, so a check that finds credits left leaves none counted.
func (s *Store) Spent(ctx context.Context, keyID string, l Limits) (Grant, error) {
	return s.Lease(ctx, keyID, l, 0, Op{}, true)
}

// Return gives back n credits leased in w (a window Lease answered) and not used, as op: a
// retry with the same op (its reply lost) gives nothing back again.
func (s *Store) Return(ctx context.Context, w Window, n int64, op Op) error {
	if n <= 0 {
		return nil
	}
	return giveBackScript.Run(ctx, s.rdb, []string{w.hourKey, w.monthKey, w.returnsKey}, n, w.MonthEnd.UnixMilli(), op.Replica, op.Seq).Err()
}

// Counted reads the credits counted in w's hour and month (0 for a count that does not exist).
func (s *Store) Counted(ctx context.Context, w Window) (hour, month int64, err error) {
	v, err := s.rdb.MGet(ctx, w.hourKey, w.monthKey).Result()
	if err != nil {
		return 0, 0, err
	}
	n := func(x any) int64 {
		str, _ := x.(string)
		i, _ := strconv.ParseInt(str, 10, 64)
		return i
	}
	return n(v[0]), n(v[1]), nil
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
