package metering

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/lifecycle"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/internal/cache"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/chainintel/chainintel/services/edge/ledger"
	"github.com/redis/go-redis/v9"
)

// PeriodSource answers the credits an entity has used in a period from durable storage (the
// usage store); the ledger seeds Redis from it when Redis has no figure.
type PeriodSource interface {
	PeriodUsed(ctx context.Context, e usage.Entity, start time.Time) (int64, error)
}

// LedgerOptions tune a CreditLedger.
type LedgerOptions struct {
	// Sync is how often the period totals of entities in use are re-read from Redis (default
	// 250ms).
	Sync    time.Duration
	Timeout time.Duration // per Redis call (default 200ms)
	Log     *slog.Logger
	Now     func() time.Time
}

// CreditLedger keeps, per billed entity and billing period, the credits used so far, fast
// enough to answer on every request.
//
// The shared period total in Redis (a hash per entity and period: "used", and "through", the
// latest call time in ms it includes) is a copy of the durable ledger (edge.credit_periods) and
// nothing else: only the metering consumer raises it, after each batch is committed, to the
// durable figure (Publish: set to the larger value, so replays and retries change nothing), and
// a replica that finds it missing seeds it from the durable ledger. No replica ever adds to it,
// so no outage, retry or lost reply can count a call twice, and once the consumer has caught up
// the total equals the durable ledger exactly, whatever happened to Redis meanwhile.
//
// A replica answers the total plus its own calls made after "through" (kept in memory until the
// total includes them: their usage events published, see Sent, and "through" past them), so its
// view is exact for its own calls; other replicas' calls appear
// once the consumer has counted them (its lag, normally well under a second). Calls in flight
// hold what they can cost (Reserve, in this replica's memory only, never in Redis or the durable
// ledger), so this replica's concurrent calls cannot together pass a limit; a burst spread over
// replicas can overshoot it by what the others admit within the consumer's lag. Safe for
// concurrent use.
type CreditLedger struct {
	rdb   redis.UniversalClient // nil: local only (seeded from the source)
	src   PeriodSource
	o     LedgerOptions
	mu    sync.Mutex
	byKey map[string]*ledgerEntry
	load  *cache.Loader[string, struct{}] // shares a period's first read; keeps nothing (byKey does)
	warn  atomic.Int64                    // unix second of the last "Redis unavailable" warning
}

type ledgerEntry struct {
	entity  usage.Entity
	start   time.Time
	durable int64     // the shared total, as last read
	through int64     // the latest call time (ms) the total includes
	own     []ownCall // this replica's calls not known to be in the total
	ownSum  int64
	held    int64 // credits reserved by this replica's calls in flight (Reserve)
	used    time.Time
}

// ownCall is this replica's calls of one millisecond; unsent counts those whose usage event
// the producer has not yet published (nor dropped). A call is forgotten only once it is sent and
// the total includes its time: while its event waits in the producer (a broker outage), a newer
// "through" from other replicas' calls does not mean the total counts it.
type ownCall struct {
	atMs    int64
	credits int64
	unsent  int32
}

// NewCreditLedger returns a ledger; Run keeps it in step with Redis.
func NewCreditLedger(rdb redis.UniversalClient, src PeriodSource, o LedgerOptions) *CreditLedger {
	if o.Sync <= 0 {
		o.Sync = 250 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = 200 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	// A load is shared by every caller waiting on its period, so it has a deadline of its own.
	load := cache.New[string, struct{}](func(k string) string { return k }, cache.Options{Timeout: 5 * time.Second})
	return &CreditLedger{rdb: rdb, src: src, o: o, byKey: map[string]*ledgerEntry{}, load: load}
}

// redisKey names the shared total of an entity's period (the layout other services read
// through package ledger).
func redisKey(e usage.Entity, start time.Time) string { return ledger.Key(e, start) }

func (en *ledgerEntry) total() int64 { return en.durable + en.ownSum }

// advance takes a newer shared total and forgets own calls it includes.
func (en *ledgerEntry) advance(durable, through int64) {
	en.durable = max(en.durable, durable)
	en.through = max(en.through, through)
	keep := en.own[:0]
	for _, c := range en.own { // in completion order, not quite in call time order
		if c.atMs <= en.through && c.unsent == 0 {
			en.ownSum -= c.credits
			continue
		}
		keep = append(keep, c)
	}
	en.own = keep
}

// Used returns the credits e has used in the current period. The first call for an entity and
// period reads Redis (or the usage store); later calls answer from memory.
func (l *CreditLedger) Used(ctx context.Context, e usage.Entity) (int64, error) {
	en, err := l.entry(ctx, e, l.o.Now())
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return en.total(), nil
}

// entry returns e's entry for the period of at, loading it on first use.
func (l *CreditLedger) entry(ctx context.Context, e usage.Entity, at time.Time) (*ledgerEntry, error) {
	start, _ := usage.PeriodOf(at)
	k := redisKey(e, start)
	l.mu.Lock()
	if en := l.byKey[k]; en != nil {
		en.used = l.o.Now()
		l.mu.Unlock()
		return en, nil
	}
	l.mu.Unlock()
	_, err := l.load.Get(ctx, k, func(fctx context.Context) (struct{}, error) {
		used, through, err := l.fetch(fctx, e, start, k)
		if err != nil {
			return struct{}{}, err
		}
		l.mu.Lock()
		if l.byKey[k] == nil {
			l.byKey[k] = &ledgerEntry{entity: e, start: start, used: l.o.Now()}
		}
		l.byKey[k].advance(used, through)
		l.mu.Unlock()
		return struct{}{}, nil
	})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	en := l.byKey[k]
	if en == nil { // dropped by a sync between the load and now (a period just ended)
		en = &ledgerEntry{entity: e, start: start, used: l.o.Now()}
		l.byKey[k] = en
	}
	return en, nil
}

// Hold is the answer of Reserve: what a call reserved before it was forwarded, or why not.
type Hold struct {
	en      *ledgerEntry
	credits int64
	// OK is whether the credits are held; Used is the period's total when Reserve answered
	// and Held what this replica's other calls in flight held then.
	OK         bool
	Used, Held int64
}

// Reserve holds n credits of e's period of at for a call about to be made. With limit >= 0 the
// hold is refused (OK false, nothing held) when the period's total, the credits this replica's
// other calls in flight hold and n together exceed limit: the check and the hold are one step,
// so this replica's concurrent calls can never together pass the limit. A hold that is OK must
// be settled (Settle).
func (l *CreditLedger) Reserve(ctx context.Context, e usage.Entity, at time.Time, n, limit int64) (Hold, error) {
	en, err := l.entry(ctx, e, at)
	if err != nil {
		return Hold{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	h := Hold{Used: en.total(), Held: en.held}
	if limit >= 0 && h.Used+h.Held+n > limit {
		return h, nil
	}
	en.held += n
	h.en, h.credits, h.OK = en, n, true
	return h, nil
}

// Settle ends a hold: the held credits are released and n (what the call cost, 0 for a failed
// call) is recorded as Add records it, in one step, so no other call sees the credits neither
// held nor used. It returns the period's total including n. Settling a zero Hold records n only.
// Unlike Add, the call is kept until its usage event is reported sent (Sent) as well as included
// in the total, so the caller must record that event with the producer whose Sent reaches here.
func (l *CreditLedger) Settle(h Hold, e usage.Entity, n int64, at time.Time) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.en != nil {
		h.en.held -= h.credits
	}
	return l.addLocked(e, n, at, 1)
}

// Add records n credits used by e in a call made at (the time its usage event carries) and
// returns the period's total including them. Used must have been called for e in this period
// (it loads the entry); otherwise the total counts only this replica's calls until the next
// sync. The call's usage event is not followed: the call is forgotten once the total's "through"
// passes it.
func (l *CreditLedger) Add(e usage.Entity, n int64, at time.Time) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.addLocked(e, n, at, 0)
}

// addLocked records n credits; unsent is 1 when the call's usage event will be reported (Sent).
func (l *CreditLedger) addLocked(e usage.Entity, n int64, at time.Time, unsent int32) int64 {
	start, _ := usage.PeriodOf(at)
	k := redisKey(e, start)
	en := l.byKey[k]
	if en == nil {
		en = &ledgerEntry{entity: e, start: start}
		l.byKey[k] = en
	}
	en.used = l.o.Now()
	if n <= 0 {
		return en.total()
	}
	// Calls of the same millisecond share one record: while the consumer is behind (a broker
	// outage) the list grows by at most a thousand records a second per entity.
	if ms := at.UnixMilli(); len(en.own) > 0 && en.own[len(en.own)-1].atMs == ms {
		en.own[len(en.own)-1].credits += n
		en.own[len(en.own)-1].unsent += unsent
	} else {
		en.own = append(en.own, ownCall{ms, n, unsent})
	}
	en.ownSum += n
	return en.total()
}

// Sent records what became of usage events of calls recorded here (Settle, Add): published, so
// the consumer will count them, or lost, never published (dropped by the producer: the bill and
// the durable ledger never count them, so neither does the live total from now on). The producer
// calls it (ProducerOptions.Sent); events of other entries or without credits are ignored.
func (l *CreditLedger) Sent(published, lost []eventbus.Event) {
	for _, ev := range published {
		l.sentOne(ev, false)
	}
	for _, ev := range lost {
		l.sentOne(ev, true)
	}
}

// sentOne releases one event's call; the lock is taken per event, so a batch of a thousand
// does not hold back the requests meanwhile.
func (l *CreditLedger) sentOne(ev eventbus.Event, lost bool) {
	c, ok := ev.Msg.(*eventsv1.UsageCall)
	if !ok || c.GetCredits() <= 0 {
		return
	}
	e := usage.BilledEntity(c.GetUserId(), c.GetOrgId())
	start, _ := usage.PeriodOf(time.UnixMilli(c.GetTimeMs()))
	k := redisKey(e, start)
	l.mu.Lock()
	defer l.mu.Unlock()
	en := l.byKey[k]
	if en == nil { // dropped meanwhile (idle, or a past period): nothing kept to release
		return
	}
	for i := len(en.own) - 1; i >= 0; i-- {
		oc := &en.own[i]
		if oc.atMs != c.GetTimeMs() || oc.unsent == 0 || oc.credits < c.GetCredits() {
			continue
		}
		oc.unsent--
		if lost || (oc.unsent == 0 && oc.atMs <= en.through) {
			// Lost: never counted. Or counted already (the consumer can count an event before
			// the producer hears the ack): the total includes it, so holding it would count it
			// twice until the next advance.
			n := c.GetCredits()
			if !lost {
				n = oc.credits
			}
			oc.credits -= n
			en.ownSum -= n
		}
		return
	}
}

// fetch reads the shared total, seeding Redis from the usage store when it has none.
func (l *CreditLedger) fetch(ctx context.Context, e usage.Entity, start time.Time, k string) (used, through int64, err error) {
	if l.rdb != nil {
		rctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
		vals, err := l.rdb.HMGet(rctx, k, ledger.FieldUsed, ledger.FieldThrough).Result()
		cancel()
		if err == nil {
			if used, through, ok := parseTotal(vals); ok {
				return used, through, nil
			}
		} else {
			l.warnRedis("credit ledger: Redis unavailable; using the usage store", err)
		}
	}
	used, err = l.src.PeriodUsed(ctx, e, start)
	if err != nil {
		return 0, 0, err
	}
	if l.rdb != nil {
		// The durable figure can only be at or below what the consumer sets; raise to it.
		rctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
		_ = raiseTotal.Run(rctx, l.rdb, []string{k}, used, 0, ttlSeconds).Err()
		cancel()
	}
	return used, 0, nil
}

func parseTotal(vals []any) (used, through int64, ok bool) {
	if len(vals) != 2 || vals[0] == nil {
		return 0, 0, false
	}
	u, err1 := strconv.ParseInt(fmt.Sprint(vals[0]), 10, 64)
	t, err2 := strconv.ParseInt(fmt.Sprint(vals[1]), 10, 64)
	if err1 != nil {
		return 0, 0, false
	}
	if vals[1] == nil || err2 != nil {
		t = 0
	}
	return u, t, true
}

// ttlSeconds keeps a period's total a little over a month.
const ttlSeconds = 40 * 24 * 3600

// raiseTotal sets a period total's "used" and "through" to the given values where they are
// larger, so that applying an older or repeated figure changes nothing.
var raiseTotal = redis.NewScript(`
local u = tonumber(redis.call("HGET", KEYS[1], "used") or "-1")
if tonumber(ARGV[1]) > u then redis.call("HSET", KEYS[1], "used", ARGV[1]) end
local t = tonumber(redis.call("HGET", KEYS[1], "through") or "-1")
if tonumber(ARGV[2]) > t then redis.call("HSET", KEYS[1], "through", ARGV[2]) end
redis.call("EXPIRE", KEYS[1], ARGV[3])
return 1`)

// Publish copies the durable totals of the billed entities of calls (already committed to the
// usage store) to Redis, with the latest call time of each. The metering consumer calls it
// after every batch, replays included; an error fails the batch, which is retried, so the shared
// totals reach the durable ledger once Redis answers.
func (l *CreditLedger) Publish(ctx context.Context, calls []usage.Call) error {
	if l.rdb == nil || len(calls) == 0 {
		return nil
	}
	type period struct {
		e     usage.Entity
		start time.Time
	}
	latest := map[period]int64{}
	for _, c := range calls {
		start, _ := usage.PeriodOf(c.Time)
		p := period{usage.BilledEntity(c.UserID, c.OrgID), start}
		latest[p] = max(latest[p], c.Time.UnixMilli())
	}
	type total struct {
		k             string
		used, through int64
	}
	totals := make([]total, 0, len(latest))
	for p, through := range latest {
		used, err := l.src.PeriodUsed(ctx, p.e, p.start)
		if err != nil {
			return err
		}
		totals = append(totals, total{redisKey(p.e, p.start), used, through})
	}
	rctx, cancel := context.WithTimeout(ctx, 4*l.o.Timeout)
	defer cancel()
	_, err := l.rdb.Pipelined(rctx, func(p redis.Pipeliner) error {
		for _, t := range totals {
			// EVAL, not EVALSHA: in a pipeline a missing script cannot be retried per command,
			// and a restarted Redis has none. The body is short; Redis caches it compiled.
			raiseTotal.Eval(rctx, p, []string{t.k}, t.used, t.through, ttlSeconds)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("publish period credit totals to Redis: %w", err)
	}
	return nil
}

// Run re-reads the totals in use every Sync until ctx ends.
func (l *CreditLedger) Run(ctx context.Context) error {
	return lifecycle.Every(ctx, l.o.Sync, l.Sync)
}

// Sync re-reads the shared totals of the entries in use (seeding those Redis lost from the usage
// store) and forgets own calls they now include; entries idle for ten minutes and entries of
// past periods are dropped.
func (l *CreditLedger) Sync(ctx context.Context) {
	now := l.o.Now()
	start, _ := usage.PeriodOf(now)
	type job struct {
		k  string
		en *ledgerEntry
	}
	var jobs []job
	l.mu.Lock()
	for k, en := range l.byKey {
		if en.held == 0 && (now.Sub(en.used) > 10*time.Minute || en.start.Before(start)) {
			delete(l.byKey, k)
			continue
		}
		jobs = append(jobs, job{k, en})
	}
	l.mu.Unlock()
	if len(jobs) == 0 || l.rdb == nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 4*l.o.Timeout)
	cmds := make([]*redis.SliceCmd, len(jobs))
	_, err := l.rdb.Pipelined(rctx, func(p redis.Pipeliner) error {
		for i, j := range jobs {
			cmds[i] = p.HMGet(rctx, j.k, ledger.FieldUsed, ledger.FieldThrough)
		}
		return nil
	})
	cancel()
	if err != nil {
		l.warnRedis("credit ledger: Redis unavailable; answering from the last totals and this replica's calls", err)
		return
	}
	for i, j := range jobs {
		used, through, ok := parseTotal(cmds[i].Val())
		if !ok { // Redis lost it: seed from the durable ledger
			var err error
			if used, through, err = l.fetch(ctx, j.en.entity, j.en.start, j.k); err != nil {
				l.warnRedis("credit ledger: cannot seed a period total", err)
				continue
			}
		}
		l.mu.Lock()
		j.en.advance(used, through)
		l.mu.Unlock()
	}
}

func (l *CreditLedger) warnRedis(msg string, err error) {
	now := l.o.Now().Unix()
	if last := l.warn.Load(); now-last >= 10 && l.warn.CompareAndSwap(last, now) {
		l.o.Log.Warn(msg, "error", err)
	}
}
