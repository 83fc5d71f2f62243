// Package store keeps what must outlive one replica in Redis: sessions (owner, filters, and
// the per-partition offsets up to which the session has been served), the replay buffer of
// transfers matched but not yet sent when a connection went away, the stream quotas, and the
// live connections per key. Every key is under a configurable prefix.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Store is safe for concurrent use.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
	now    func() time.Time
	// periodNow, when set, is the clock the quota scripts name their period by instead of
	// the Redis server's TIME (PeriodClock).
	periodNow func() time.Time
	// replaySession and replayKey bound the bytes of a session's replay buffer and of all the
	// replay buffers of a key (ReplayLimits; 0: no bound).
	replaySession, replayKey int64
}

// Option configures a Store at construction.
type Option func(*Store)

// PeriodClock makes the quota scripts read the time from now instead of the Redis server's
// clock: for tests that move time across hours and months. Without it Redis's clock alone
// decides a quota's period, whatever the replicas' clocks say.
func PeriodClock(now func() time.Time) Option { return func(s *Store) { s.periodNow = now } }

// ReplayLimits bounds the replay buffers: a session's to perSession bytes, all of a key's
// sessions' together to perKey bytes (0: no bound). A save keeps the oldest deliveries that fit
// and drops the rest, recording them in the session's Dropped for its next claim.
func ReplayLimits(perSession, perKey int64) Option {
	return func(s *Store) { s.replaySession, s.replayKey = max(perSession, 0), max(perKey, 0) }
}

// New returns a store whose keys all start with prefix; now is the clock (nil: time.Now).
func New(rdb redis.UniversalClient, prefix string, now func() time.Time, opts ...Option) *Store {
	if now == nil {
		now = time.Now
	}
	s := &Store{rdb: rdb, prefix: prefix, now: now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// ErrNoSession means the session does not exist (never, expired, deleted, or another key's).
var ErrNoSession = errors.New("no such session")

// ErrTakenOver means another connection claimed the session.
var ErrTakenOver = errors.New("session taken over by another connection")

// ErrDeleted means the session was deleted (DELETE /ws/sessions/{id}, /ws/v2/streams/{id}, or
// a create over the key's cap) while a connection served it.
var ErrDeleted = errors.New("session deleted")

// ErrLost means the session's hash is gone from Redis though nobody deleted it (Redis restarted
// empty, was flushed, or failed over to a replica that never had it) and the update carried no
// copy to store again.
var ErrLost = errors.New("session lost by the store")

// ErrSessionCap means the session's hash is gone from Redis though nobody deleted it, and its
// key already has as many live sessions and v2 streams as Update.SessionCap allows: it was not
// stored again (a restore must not take a key over the cap its creates are refused at).
var ErrSessionCap = errors.New("session lost by the store and not stored again: its key is at its cap of live sessions and v2 streams")

// deletedTTL is how long a deleted session's tombstone keeps its connection from storing it
// again: far longer than a connection waits between saves (STREAM_CHECKPOINT).
const deletedTTL = time.Hour

// FilterRec is one stored filter: its id and the JSON the client sent.
type FilterRec struct {
	ID  string          `json:"filterId"`
	Raw json.RawMessage `json:"filters"`
}

// Session is a stored session.
type Session struct {
	ID       string
	KeyID    string
	UserID   string
	Kind     string // "ws" (subscribe messages), "rest" (created over REST), "v2" (a v2 stream)
	Seq      int64  // v2 streams: the numeric id
	Created  time.Time
	LastSeen time.Time
	Used     int64
	Owner    string // the connection serving it, "" while none does
	Filters  []FilterRec
	Cursor   map[int]int64 // partition → first offset not yet served
	Replay   [][]byte      // messages owed, in order (Claim only)
	// Dropped is what the replay buffer's limits dropped since the session was last claimed
	// (Claim only; nil: nothing).
	Dropped   *Dropped
	HasCursor bool
}

// Dropped counts deliveries owed to a session that its replay buffer's limits (ReplayLimits)
// dropped: always the newest of a save, so what a resume replays is the owed deliveries' oldest
// part, in order, and the dropped ones are the transfers of blocks timed between FirstMs and
// LastMs (block times, Unix milliseconds) that the session's filters matched.
type Dropped struct {
	Count           int64
	FirstMs, LastMs int64
}

// merge adds o to d (either may be nil).
func (d *Dropped) merge(o *Dropped) *Dropped {
	switch {
	case o == nil || o.Count == 0:
		return d
	case d == nil || d.Count == 0:
		return o
	}
	return &Dropped{Count: d.Count + o.Count, FirstMs: min(d.FirstMs, o.FirstMs), LastMs: max(d.LastMs, o.LastMs)}
}

// String is the hash field's form, count:first:last.
func (d *Dropped) String() string {
	if d == nil || d.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d", d.Count, d.FirstMs, d.LastMs)
}

// parseDropped reads the hash field's form (nil when empty or malformed).
func parseDropped(v string) *Dropped {
	var d Dropped
	if _, err := fmt.Sscanf(v, "%d:%d:%d", &d.Count, &d.FirstMs, &d.LastMs); err != nil || d.Count <= 0 {
		return nil
	}
	return &d
}

func (s *Store) skey(id string) string  { return s.prefix + "s:" + id }
func (s *Store) rkey(id string) string  { return s.prefix + "r:" + id }
func (s *Store) kkey(key string) string { return s.prefix + "k:" + key }
func (s *Store) dkey(id string) string  { return s.prefix + "d:" + id }

// bkey is the hash of a key's replay buffer sizes (session id → bytes), which the scripts bound
// a key's buffers by (they build its name the same way, from the prefix and the session's key).
func (s *Store) bkey(key string) string { return s.prefix + "b:" + key }

func (s *Store) ms() int64 { return s.now().UnixMilli() }

// ErrSessionLimit refuses a Create: the key already has its limit of live sessions.
var ErrSessionLimit = errors.New("session limit reached")

// Create stores a new session, unowned, alive for ttl, unless its key already has limit live
// sessions (ErrSessionLimit); a limit of 0 is none.
func (s *Store) Create(ctx context.Context, ss Session, ttl time.Duration, limit int) error {
	f, _ := json.Marshal(ss.Filters)
	if ss.Filters == nil {
		f = []byte("[]")
	}
	c, _ := json.Marshal(ss.Cursor)
	created := ss.Created.UnixMilli()
	// restoreScript counts the key's live sessions and stores the new one in one step, so
	// concurrent creates of a key (REST, v2 and subscribes on any replica) never take it over its
	// limit, and none is refused for a place another gave back.
	n, err := restoreScript.Run(ctx, s.rdb, []string{s.skey(ss.ID), s.dkey(ss.ID), s.kkey(ss.KeyID)},
		ttl.Milliseconds(), ss.ID, limit, s.skey(""),
		"key", ss.KeyID, "user", ss.UserID, "kind", ss.Kind, "seq", ss.Seq, "created", created,
		"seen", created, "used", 0, "owner", ss.Owner, "filters", f, "cursor", c, "hascursor", boolInt(ss.HasCursor)).Int()
	switch {
	case err != nil:
		return err
	case n == 0:
		return fmt.Errorf("session %s exists already", ss.ID)
	case n == 2:
		return ErrSessionLimit
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// claim: KEYS session, replay; ARGV key id, owner, now, ttl ms, fresh, prefix, session id.
// Returns the session's fields and the replay buffer, now owned by owner; the replay buffer and
// what its limits dropped are handed over (deleted, and the buffer's size dropped from its key's
// sizes).
var claimScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if redis.call('HGET', KEYS[1], 'key') ~= ARGV[1] then return false end
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'seen', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
local replay = {}
if ARGV[5] ~= '1' then replay = redis.call('LRANGE', KEYS[2], 0, -1) end
redis.call('DEL', KEYS[2])
redis.call('HDEL', ARGV[6] .. 'b:' .. ARGV[1], ARGV[7])
local fields = redis.call('HGETALL', KEYS[1])
redis.call('HDEL', KEYS[1], 'dropped')
return {fields, replay}
`)

// Claim makes owner the session's server and returns it with its replay buffer (emptied in
// Redis); fresh drops the buffer instead. ErrNoSession when it does not exist for keyID.
func (s *Store) Claim(ctx context.Context, id, keyID, owner string, ttl time.Duration, fresh bool) (Session, error) {
	v, err := claimScript.Run(ctx, s.rdb, []string{s.skey(id), s.rkey(id)}, keyID, owner, s.ms(), ttl.Milliseconds(), boolInt(fresh), s.prefix, id).Slice()
	if errors.Is(err, redis.Nil) {
		return Session{}, ErrNoSession
	}
	if err != nil {
		return Session{}, err
	}
	ss, err := parse(id, v[0].([]any))
	if err != nil {
		return ss, err
	}
	for _, r := range v[1].([]any) {
		ss.Replay = append(ss.Replay, []byte(r.(string)))
	}
	return ss, nil
}

func parse(id string, flat []any) (Session, error) {
	m := map[string]string{}
	for i := 0; i+1 < len(flat); i += 2 {
		m[flat[i].(string)] = flat[i+1].(string)
	}
	ss := Session{ID: id, KeyID: m["key"], UserID: m["user"], Kind: m["kind"], Owner: m["owner"], HasCursor: m["hascursor"] == "1",
		Dropped: parseDropped(m["dropped"])}
	ss.Seq, _ = strconv.ParseInt(m["seq"], 10, 64)
	ss.Used, _ = strconv.ParseInt(m["used"], 10, 64)
	if ms, err := strconv.ParseInt(m["created"], 10, 64); err == nil {
		ss.Created = time.UnixMilli(ms).UTC()
	}
	if ms, err := strconv.ParseInt(m["seen"], 10, 64); err == nil {
		ss.LastSeen = time.UnixMilli(ms).UTC()
	}
	if err := json.Unmarshal([]byte(m["filters"]), &ss.Filters); err != nil && m["filters"] != "" {
		return ss, fmt.Errorf("session %s: filters: %w", id, err)
	}
	if err := json.Unmarshal([]byte(m["cursor"]), &ss.Cursor); err != nil && m["cursor"] != "" {
		return ss, fmt.Errorf("session %s: cursor: %w", id, err)
	}
	return ss, nil
}

// Get reads a session of keyID without claiming it.
func (s *Store) Get(ctx context.Context, id, keyID string) (Session, error) {
	m, err := s.rdb.HGetAll(ctx, s.skey(id)).Result()
	if err != nil {
		return Session{}, err
	}
	return fromMap(id, keyID, m)
}

// listBatch is how many sessions one pipelined round trip of List reads.
const listBatch = 500

// List returns keyID's live sessions, dropping expired ids from its set. The sessions are read
// in pipelined batches, not one round trip each.
func (s *Store) List(ctx context.Context, keyID string) ([]Session, error) {
	ids, err := s.rdb.SMembers(ctx, s.kkey(keyID)).Result()
	if err != nil {
		return nil, err
	}
	out := make([]Session, 0, len(ids))
	var dead []any
	for start := 0; start < len(ids); start += listBatch {
		batch := ids[start:min(start+listBatch, len(ids))]
		cmds := make([]*redis.MapStringStringCmd, len(batch))
		if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, id := range batch {
				cmds[i] = p.HGetAll(ctx, s.skey(id))
			}
			return nil
		}); err != nil {
			return nil, err
		}
		for i, id := range batch {
			ss, err := fromMap(id, keyID, cmds[i].Val())
			if errors.Is(err, ErrNoSession) {
				dead = append(dead, id)
				continue
			}
			if err != nil {
				return nil, err
			}
			out = append(out, ss)
		}
	}
	s.prune(ctx, keyID, dead)
	return out, nil
}

// fromMap parses a session's hash as read for keyID (ErrNoSession when empty or another key's).
func fromMap(id, keyID string, m map[string]string) (Session, error) {
	if len(m) == 0 || m["key"] != keyID {
		return Session{}, ErrNoSession
	}
	flat := make([]any, 0, 2*len(m))
	for k, v := range m {
		flat = append(flat, k, v)
	}
	return parse(id, flat)
}

// pruneScript: KEYS key set; ARGV session key prefix, ids. Drops the ids whose session hash is
// still missing: a session a connection stored again (restoreScript) since the caller found it
// missing stays in the set, counted and listed.
var pruneScript = redis.NewScript(`
for i = 2, #ARGV do
  if redis.call('EXISTS', ARGV[1] .. ARGV[i]) == 0 then redis.call('SREM', KEYS[1], ARGV[i]) end
end
return 0
`)

// prune drops from keyID's set the ids of sessions found missing (expired), best effort.
func (s *Store) prune(ctx context.Context, keyID string, dead []any) {
	if len(dead) == 0 {
		return
	}
	_ = pruneScript.Run(ctx, s.rdb, []string{s.kkey(keyID)}, append([]any{s.skey("")}, dead...)...).Err()
}

// Delete removes a session of keyID; false when there was none.
func (s *Store) Delete(ctx context.Context, id, keyID string) (bool, error) {
	if _, err := s.Get(ctx, id, keyID); err != nil {
		if errors.Is(err, ErrNoSession) {
			return false, nil
		}
		return false, err
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, s.skey(id), s.rkey(id))
		p.SRem(ctx, s.kkey(keyID), id)
		// The tombstone tells a connection still serving the session that it was deleted,
		// not lost by Redis: it ends instead of storing the session again.
		p.Set(ctx, s.dkey(id), 1, deletedTTL)
		return nil
	})
	return err == nil, err
}

// update: KEYS session, replay, tombstone; ARGV owner, now, ttl ms, filters (” keeps), cursor
// (” keeps), used delta, release ('1' clears the owner), prefix, session id, the session's and
// the key's replay byte limits (0: none), dropped to add (count:first:last or ”), then per
// message owed its block time (ms) and the message, appended to the replay buffer. Returns
// {code, dropped}: code 1 (applied), 0 (another connection owns it), 2 (no hash and no
// tombstone: Redis lost it), 3 (deleted); dropped, the messages the limits left out.
//
// The limits keep the oldest messages that fit and drop every one after the first that does
// not, so a resume replays an unbroken, ordered head of what was owed. The key's total is the
// sum of its sessions' recorded sizes whose buffers still exist (a buffer claimed, expired or
// deleted drops out as the sum is taken).
var updateScript = redis.NewScript(`
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner then
  if redis.call('EXISTS', KEYS[3]) == 1 then return {3, 0} end
  return {2, 0}
end
if owner ~= ARGV[1] then return {0, 0} end
redis.call('HSET', KEYS[1], 'seen', ARGV[2])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'filters', ARGV[4]) end
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'cursor', ARGV[5], 'hascursor', 1) end
redis.call('HINCRBY', KEYS[1], 'used', ARGV[6])
if ARGV[7] == '1' then redis.call('HSET', KEYS[1], 'owner', '') end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if #ARGV < 14 and ARGV[12] == '' then return {1, 0} end
local sid, scap, kcap = ARGV[9], tonumber(ARGV[10]), tonumber(ARGV[11])
local bk = ARGV[8] .. 'b:' .. (redis.call('HGET', KEYS[1], 'key') or '')
local mine, others = 0, 0
local sizes = redis.call('HGETALL', bk)
for i = 1, #sizes, 2 do
  if sizes[i] == sid then
    if redis.call('EXISTS', KEYS[2]) == 1 then mine = tonumber(sizes[i + 1]) end
  elseif redis.call('EXISTS', ARGV[8] .. 'r:' .. sizes[i]) == 1 then
    others = others + tonumber(sizes[i + 1])
  else
    redis.call('HDEL', bk, sizes[i])
  end
end
local bounded, room = false, 0
if scap > 0 then bounded, room = true, scap - mine end
if kcap > 0 and (not bounded or kcap - mine - others < room) then bounded, room = true, kcap - mine - others end
local n, first, last, cut = 0, 0, 0, false
for i = 13, #ARGV, 2 do
  local msg, at = ARGV[i + 1], tonumber(ARGV[i])
  if not cut and (not bounded or #msg <= room) then
    redis.call('RPUSH', KEYS[2], msg)
    mine = mine + #msg
    room = room - #msg
  else
    cut = true
    if n == 0 or at < first then first = at end
    if n == 0 or at > last then last = at end
    n = n + 1
  end
end
if #ARGV >= 14 then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  if mine > 0 then
    redis.call('HSET', bk, sid, mine)
    if redis.call('PTTL', bk) < tonumber(ARGV[3]) then redis.call('PEXPIRE', bk, ARGV[3]) end
  end
end
local c, f, l = 0, 0, 0
local function count(x, y, z)
  x, y, z = tonumber(x), tonumber(y), tonumber(z)
  if not x or not y or not z or x <= 0 then return end
  if c == 0 or y < f then f = y end
  if c == 0 or z > l then l = z end
  c = c + x
end
local function countField(v)
  if not v or v == '' then return end
  local x, y, z = string.match(v, '^(%d+):(%-?%d+):(%-?%d+)$')
  if x then count(x, y, z) end
end
countField(redis.call('HGET', KEYS[1], 'dropped'))
countField(ARGV[12])
count(n, first, last)
if c > 0 then redis.call('HSET', KEYS[1], 'dropped', string.format('%.0f:%.0f:%.0f', c, f, l)) end
return {1, n}
`)

// Update is a write by the session's owner; ErrTakenOver when owner no longer owns it,
// ErrDeleted when it was deleted.
type Update struct {
	Filters []FilterRec   // nil keeps
	Cursor  map[int]int64 // nil keeps
	Used    int64         // transfers delivered since the last update
	Release bool          // the connection went away: the session waits for a reconnect
	Replay  [][]byte      // messages owed, appended to the replay buffer
	// ReplayTimes are the block times (Unix ms) of Replay's messages, index for index, for
	// Dropped's times (missing ones count as 0).
	ReplayTimes []int64
	// Dropped is added to what the session's replay limits dropped before (a claimed session
	// handed back keeps what its claim took).
	Dropped *Dropped
	// OnDropped, when set, is told how many of Replay's messages the replay limits dropped.
	OnDropped func(n int64)
	// Restore returns the session as its owner holds it (identity, filters, cursor), to store
	// again when Redis lost it; false (or a nil Restore) makes Apply return ErrLost instead.
	// Called only then. The copy's Used is the transfers charged to the session as its owner
	// last saved them: the restore starts the session's count from it (before Used above).
	Restore func() (Session, bool)
	// SessionCap, when positive, is the key's cap of live sessions and v2 streams: a lost
	// session is stored again only while the key has fewer (else ErrSessionCap).
	SessionCap int
}

// Apply writes u for owner and keeps the session alive for ttl. A session whose hash is
// missing without having been deleted was lost by Redis, not taken over: the owner, which holds
// it in memory, stores it again (u.Restore) and the update is applied to that.
func (s *Store) Apply(ctx context.Context, id, owner string, ttl time.Duration, u Update) error {
	var f, c string
	if u.Filters != nil {
		b, _ := json.Marshal(u.Filters)
		f = string(b)
	}
	if u.Cursor != nil {
		b, _ := json.Marshal(u.Cursor)
		c = string(b)
	}
	args := []any{owner, s.ms(), ttl.Milliseconds(), f, c, u.Used, boolInt(u.Release), s.prefix, id,
		s.replaySession, s.replayKey, u.Dropped.String()}
	for i, r := range u.Replay {
		var at int64
		if i < len(u.ReplayTimes) {
			at = u.ReplayTimes[i]
		}
		args = append(args, at, r)
	}
	keys := []string{s.skey(id), s.rkey(id), s.dkey(id)}
	run := func() (int64, int64, error) {
		v, err := updateScript.Run(ctx, s.rdb, keys, args...).Int64Slice()
		if err == nil && len(v) != 2 {
			err = fmt.Errorf("session update answered %v", v)
		}
		if err != nil {
			return 0, 0, err
		}
		return v[0], v[1], nil
	}
	n, dropped, err := run()
	if err == nil && n == 2 {
		if err = s.restore(ctx, id, owner, ttl, u.SessionCap, u.Restore); err == nil {
			n, dropped, err = run()
		}
	}
	if err != nil {
		return err
	}
	if dropped > 0 && u.OnDropped != nil {
		u.OnDropped(dropped)
	}
	switch n {
	case 0:
		return ErrTakenOver
	case 2:
		return ErrLost
	case 3:
		return ErrDeleted
	}
	return nil
}

// restoreScript: KEYS session, tombstone, key set; ARGV ttl ms, id, cap (0: none), session key
// prefix, then the hash's fields and values. Stores the session only where there is neither a
// hash nor a tombstone (0 otherwise), and only while the key set holds fewer than cap live
// sessions (2 otherwise; the ids of expired ones are dropped from it as they are counted).
var restoreScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local cap = tonumber(ARGV[3])
if cap > 0 then
  local live = 0
  for _, m in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    if redis.call('EXISTS', ARGV[4] .. m) == 1 then live = live + 1 else redis.call('SREM', KEYS[3], m) end
  end
  if live >= cap then return 2 end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[2])
return 1
`)

// restore stores again, owned by owner, the session Redis lost, as restore returns it, unless
// it is a REST session or v2 stream and its key is at sessionCap (ErrSessionCap). The transfers it was charged (used) start from the
// count its owner last saved, and the update being applied adds its own; the replay buffer,
// which only a session without an owner has, is not concerned.
func (s *Store) restore(ctx context.Context, id, owner string, ttl time.Duration, sessionCap int, restore func() (Session, bool)) error {
	if restore == nil {
		return nil
	}
	ss, ok := restore()
	if !ok || ss.ID != id {
		return nil
	}
	f, _ := json.Marshal(ss.Filters)
	if ss.Filters == nil {
		f = []byte("[]")
	}
	c, _ := json.Marshal(ss.Cursor)
	seen := s.ms()
	// A "ws" session (made by a subscribe message) is stored again whatever its key holds, as a
	// reconnect to it is taken: its connection serves it, and ending it for the cap would drop
	// what it is owed. A REST session's or v2 stream's connection may be told to make one again.
	if ss.Kind == "ws" {
		sessionCap = 0
	}
	n, err := restoreScript.Run(ctx, s.rdb, []string{s.skey(id), s.dkey(id), s.kkey(ss.KeyID)}, ttl.Milliseconds(), id, max(sessionCap, 0), s.skey(""),
		"key", ss.KeyID, "user", ss.UserID, "kind", ss.Kind, "seq", ss.Seq, "created", ss.Created.UnixMilli(),
		"seen", seen, "used", max(ss.Used, 0), "owner", owner, "filters", f, "cursor", c, "hascursor", boolInt(ss.HasCursor)).Int()
	if err == nil && n == 2 {
		return ErrSessionCap
	}
	return err
}

// Connected reports whether the session has an owner.
func (ss Session) Connected() bool { return ss.Owner != "" }

// seqScript: KEYS the key's stream counter, the key's session set; ARGV session key prefix.
// Counts on from the counter, or, when the counter is new (a key's first stream, streams made
// while every key shared one counter, a counter Redis lost), from the highest id among the
// key's live sessions, so no two of a key's streams share an id.
var seqScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then
  for _, id in ipairs(redis.call('SMEMBERS', KEYS[2])) do
    local seq = tonumber(redis.call('HGET', ARGV[1] .. id, 'seq') or '0') or 0
    if seq >= n then n = seq + 1 end
  end
  redis.call('SET', KEYS[1], n)
end
return n
`)

// NextSeq returns the next numeric id of keyID's v2 streams. Each key counts its own: one
// counter for every key would tell any caller how many streams all callers make.
func (s *Store) NextSeq(ctx context.Context, keyID string) (int64, error) {
	return seqScript.Run(ctx, s.rdb, []string{s.prefix + "seq:" + keyID, s.kkey(keyID)}, s.skey("")).Int64()
}
