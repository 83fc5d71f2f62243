package metering

import (
	"context"
	"fmt"
	"log/slog"
	"math"
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

// PeriodSource answers from durable storage (the usage store) what periods have counted (each
// one's credits and the latest call time they include, read together, every period of a call
// in one statement), which the ledger seeds Redis from when Redis has no figure and the
// consumer copies there, and which
// events were counted (usage.Store.Counted), which settles whether the total includes a call
// whose event a failed publish may have written.
type PeriodSource interface {
	PeriodTotals(ctx context.Context, periods []usage.PeriodRef) ([]usage.Total, error)
	Counted(ctx context.Context, periods []usage.PeriodRef, ids []string) ([]usage.Total, map[string]bool, error)
}

// LedgerOptions tune a CreditLedger.
type LedgerOptions struct {
	// Sync is how often the period totals of entities in use are re-read from Redis (default
	// 250ms).
	Sync time.Duration
	// Timeout bounds each Redis call (default 200ms); four times it bounds a sync's pipelined
	// read and its read of the durable ledger.
	Timeout time.Duration
	// Durable is how often at most the durable ledger is read in place of Redis (while Redis
	// fails, or with no Redis), asked again about calls in doubt whose total grew, or read
	// again after a failed read (default 1s). A read asking about calls newly in doubt does not
	// wait.
	Durable time.Duration
	Log     *slog.Logger
	Now     func() time.Time
}

// CreditLedger keeps, per billed entity and billing period, the credits used so far, fast
// enough to answer on every request.
//
// The shared period total in Redis (a hash per entity and period: "used", and "through", the
// latest call time in ms it includes) is a copy of the durable ledger (edge.credit_periods) and
// nothing else: only the metering consumer raises it, after each batch is committed, to the
// durable figures, read together (Publish: each set to the larger value, so replays and retries
// change nothing, and no call after "through" is in "used"), and a replica that finds it
// missing seeds it from the durable ledger. No replica ever adds to it,
// so no outage, retry or lost reply can count a call twice, and once the consumer has caught up
// the total equals the durable ledger exactly, whatever happened to Redis meanwhile.
//
// A replica answers the total plus its own calls the total does not include, so its view is
// exact for its own calls, whatever a publish wrote before it failed; other replicas' calls
// appear once the consumer has counted them (its lag, normally well under a second). Own calls
// whose usage event is not reported published are kept by event id (bounded by the producer's
// queue and batches, and the calls in flight); published ones only as credits per millisecond,
// until "through" passes them (see Sent). While Redis fails, the totals and "through" are read
// from the durable ledger instead, at most every Durable, so what is kept stays the consumer's
// lag, not the outage's length. Calls in flight hold what they can cost (Reserve, in this
// replica's memory only, never in Redis or the durable ledger), so this replica's concurrent
// calls cannot together pass a limit; a burst spread over replicas can overshoot it by what the
// others admit within the consumer's lag. Safe for concurrent use.
type CreditLedger struct {
	rdb   redis.UniversalClient // nil: no shared total; the durable ledger is read in its place
	src   PeriodSource
	o     LedgerOptions
	mu    sync.Mutex
	byKey map[string]*ledgerEntry
	load  *cache.Loader[string, struct{}] // shares a period's first read; keeps nothing (byKey does)
	warn  atomic.Int64                    // unix second of the last "Redis unavailable" warning
	// readAfter: no read of the durable ledger before it (one failed); fallbackAfter: no read
	// of every total from it before it (Redis failing); reaskAfter: no asking again about
	// calls in doubt already asked about before it. All under mu.
	readAfter, fallbackAfter, reaskAfter time.Time
}

type ledgerEntry struct {
	entity  usage.Entity
	start   time.Time
	durable int64 // the shared total, as last read (from Redis or the durable ledger)
	through int64 // the latest call time (ms) the total includes
	// This replica's calls not known to be in the total, all in ownSum: by event id while
	// their event is not reported published (Sent), then as credits per call time (ms) until
	// "through" passes them.
	unsent map[string]unsentCall
	sent   map[int64]int64
	ownSum int64
	// doubt is how many unsent calls a failed publish may have written (unsentCall.doubt);
	// doubtMin is at or below the earliest of their times. asked is the durable total that the
	// last read of the durable ledger classified them against (-1: one is not asked about yet),
	// and doubtGen counts calls put in doubt (so a read knows whether one came during it).
	doubt    int
	doubtMin int64
	asked    int64
	doubtGen uint64
	held     int64 // credits reserved by this replica's calls in flight (Reserve)
	used     time.Time
}

// unsentCall is one of this replica's calls whose usage event is not reported published. While
// it is, a newer "through" does not mean the total counts it: the event may wait in the
// producer (a broker outage) while other replicas' newer calls are counted. doubt: a publish
// of it failed, and may have written it before failing, so the consumer may count it while it
// is not reported published; only its id tells (resolve).
type unsentCall struct {
	atMs    int64
	credits int64
	doubt   bool
}

// NewCreditLedger returns a ledger; Run keeps it in step with Redis.
func NewCreditLedger(rdb redis.UniversalClient, src PeriodSource, o LedgerOptions) *CreditLedger {
	if o.Sync <= 0 {
		o.Sync = 250 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = 200 * time.Millisecond
	}
	if o.Durable <= 0 {
		o.Durable = time.Second
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

func newEntry(e usage.Entity, start, now time.Time) *ledgerEntry {
	return &ledgerEntry{entity: e, start: start, unsent: map[string]unsentCall{}, sent: map[int64]int64{}, used: now}
}

func (en *ledgerEntry) total() int64 { return en.durable + en.ownSum }

// advance takes a newer total and forgets the published calls it includes. A published call
// is kept only while later than "through" (Sent forgets one that is not), so only a "through"
// that grows can let one go.
func (en *ledgerEntry) advance(durable, through int64) {
	en.durable = max(en.durable, durable)
	if through <= en.through {
		return
	}
	en.through = through
	for ms, n := range en.sent {
		if ms <= through {
			delete(en.sent, ms)
			en.ownSum -= n
		}
	}
}

// dropUnsent removes an unsent call (published, lost, or found counted).
func (en *ledgerEntry) dropUnsent(id string, c unsentCall) {
	delete(en.unsent, id)
	en.ownSum -= c.credits
	if c.doubt {
		en.doubt--
	}
}

// needsAsk reports whether the total may include a call in doubt without this replica knowing:
// "through" has passed one (a total whose "through" is short of a call cannot include it) and
// one was not asked about yet, or the total grew since they were asked about (a total no
// larger than the one that did not include them still does not: each has credits) and reask.
func (en *ledgerEntry) needsAsk(reask bool) bool {
	if en.doubt == 0 || en.doubtMin > en.through {
		return false
	}
	return en.asked < 0 || reask && en.durable > en.asked
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
			l.byKey[k] = newEntry(e, start, l.o.Now())
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
		en = newEntry(e, start, l.o.Now())
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
// call) is recorded as this replica's call made at (the time its usage event carries), in one
// step, so no other call sees the credits neither held nor used. It returns the period's total
// including n. Settling a zero Hold records n only.
//
// id is the id of the call's usage event: the call counts here until the producer whose Sent
// reaches this ledger reports that event published and the total includes it, or reports it
// lost. So once Settle has run, the caller must record the event with that id whatever happens
// next (a panic included): a call whose event is never recorded stays in this replica's live
// total until its period ends.
func (l *CreditLedger) Settle(h Hold, e usage.Entity, n int64, at time.Time, id string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.en != nil {
		h.en.held -= h.credits
	}
	start, _ := usage.PeriodOf(at)
	k := redisKey(e, start)
	en := l.byKey[k]
	if en == nil {
		en = newEntry(e, start, l.o.Now())
		l.byKey[k] = en
	}
	en.used = l.o.Now()
	if n <= 0 {
		return en.total()
	}
	c := en.unsent[id] // an id given twice adds to one call
	c.atMs, c.credits = at.UnixMilli(), c.credits+n
	en.unsent[id] = c
	en.ownSum += n
	return en.total()
}

// Sent records what became of usage events of calls recorded here (Settle): published, so the
// consumer will count them, or lost, never published (dropped by the producer: the bill and the
// durable ledger never count them, so neither does the live total from now on). The producer
// calls it (ProducerOptions.Sent); events of calls not kept here are ignored.
func (l *CreditLedger) Sent(published, lost []eventbus.Event) {
	for _, ev := range published {
		l.sentOne(ev, false)
	}
	for _, ev := range lost {
		l.sentOne(ev, true)
	}
}

// Unconfirmed records that a publish of these usage events failed (ProducerOptions.Unconfirmed):
// it may have written some of them before failing, and the consumer count them while they are
// not reported published, so they are in doubt until then (resolve asks the durable ledger).
// Only such calls are: a call whose event is not yet published, or whose first publish has not
// answered, is not, although other replicas' calls counted meanwhile move "through" past it (a
// call is settled when its header goes out and its event recorded, with its start time, when
// its body ends): asking about every such call would read the durable ledger on every sync of
// every busy entity. A first publish that wrote its events and has not answered yet leaves them
// counted twice until it answers (Sent forgets a published call "through" has passed).
func (l *CreditLedger) Unconfirmed(events []eventbus.Event) {
	for _, ev := range events {
		l.unconfirmedOne(ev)
	}
}

// keyOf returns the key of the entry a usage event's call is kept in, built before
// the lock is taken.
func (l *CreditLedger) keyOf(c *eventsv1.UsageCall) string {
	e := usage.BilledEntity(c.GetUserId(), c.GetOrgId())
	start, _ := usage.PeriodOf(time.UnixMilli(c.GetTimeMs()))
	return redisKey(e, start)
}

// unconfirmedOne puts one event's call in doubt; the lock is taken per event, as in sentOne.
func (l *CreditLedger) unconfirmedOne(ev eventbus.Event) {
	l.withUnsent(ev, func(en *ledgerEntry, uc unsentCall) {
		if uc.doubt {
			return
		}
		uc.doubt = true
		en.unsent[ev.ID] = uc
		if en.doubt == 0 || uc.atMs < en.doubtMin {
			en.doubtMin = uc.atMs
		}
		en.doubt++
		en.doubtGen++
		en.asked = -1
	})
}

// withUnsent runs fn, under the lock, on the entry keeping ev's call unsent and that call;
// nothing when ev is no call with credits or the call is not kept (its entry dropped
// meanwhile, a past period's, or it was released already).
func (l *CreditLedger) withUnsent(ev eventbus.Event, fn func(en *ledgerEntry, uc unsentCall)) {
	c, ok := ev.Msg.(*eventsv1.UsageCall)
	if !ok || c.GetCredits() <= 0 {
		return
	}
	k := l.keyOf(c)
	l.mu.Lock()
	defer l.mu.Unlock()
	if en := l.byKey[k]; en != nil {
		if uc, ok := en.unsent[ev.ID]; ok {
			fn(en, uc)
		}
	}
}

// sentOne releases one event's call; the lock is taken per event, so a batch of a thousand
// does not hold back the requests meanwhile.
func (l *CreditLedger) sentOne(ev eventbus.Event, lost bool) {
	l.withUnsent(ev, func(en *ledgerEntry, uc unsentCall) {
		en.dropUnsent(ev.ID, uc)
		if lost || uc.atMs <= en.through {
			// Lost: never counted. Or counted already (the consumer can count an event before
			// the producer hears the ack): the total includes it, so keeping it would count it
			// twice until the next advance.
			return
		}
		en.sent[uc.atMs] += uc.credits
		en.ownSum += uc.credits
	})
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
	ts, err := l.src.PeriodTotals(ctx, []usage.PeriodRef{{Entity: e, Start: start}})
	if err != nil {
		return 0, 0, fmt.Errorf("credits used by %s %s: %w", e.Type, e.ID, err)
	}
	t := ts[0]
	if l.rdb != nil {
		// The durable figure can only be at or below what the consumer sets; raise to it.
		rctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
		_ = raiseTotal.Run(rctx, l.rdb, []string{k}, t.Used, t.ThroughMs, ttlSeconds).Err()
		cancel()
	}
	return t.Used, t.ThroughMs, nil
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
// larger, so that applying an older or repeated figure changes nothing. Each pair given is read
// from one snapshot of the durable ledger, where both only grow, so the larger of each is the
// newest snapshot's pair: "through" always belongs with "used".
var raiseTotal = redis.NewScript(`
local u = tonumber(redis.call("HGET", KEYS[1], "used") or "-1")
if tonumber(ARGV[1]) > u then redis.call("HSET", KEYS[1], "used", ARGV[1]) end
local t = tonumber(redis.call("HGET", KEYS[1], "through") or "-1")
if tonumber(ARGV[2]) > t then redis.call("HSET", KEYS[1], "through", ARGV[2]) end
redis.call("EXPIRE", KEYS[1], ARGV[3])
return 1`)

// Publish copies the durable totals of the periods of calls (already committed to the usage
// store) to Redis: the credits used and the latest call time they include, read together (every
// period of the batch in one statement), so that no call after "through" is in "used" (a total read only after this batch, with this
// batch's latest call time, could include another consumer's batch committed meanwhile and
// leave out its later calls' times). The metering consumer calls it after every batch, replays
// included; an error fails the batch, which is retried, so the shared totals reach the durable
// ledger once Redis answers.
func (l *CreditLedger) Publish(ctx context.Context, calls []usage.Call) error {
	if l.rdb == nil || len(calls) == 0 {
		return nil
	}
	touched := map[usage.PeriodRef]bool{}
	var periods []usage.PeriodRef
	for _, c := range calls {
		start, _ := usage.PeriodOf(c.Time)
		p := usage.PeriodRef{Entity: usage.BilledEntity(c.UserID, c.OrgID), Start: start}
		if !touched[p] {
			touched[p] = true
			periods = append(periods, p)
		}
	}
	totals, err := l.src.PeriodTotals(ctx, periods)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, 4*l.o.Timeout)
	defer cancel()
	_, err = l.rdb.Pipelined(rctx, func(p redis.Pipeliner) error {
		for i, t := range totals {
			// EVAL, not EVALSHA: in a pipeline a missing script cannot be retried per command,
			// and a restarted Redis has none. The body is short; Redis caches it compiled.
			raiseTotal.Eval(rctx, p, []string{redisKey(periods[i].Entity, periods[i].Start)}, t.Used, t.ThroughMs, ttlSeconds)
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
// store) and forgets own calls they now include; then it reads the durable ledger where needed
// (resolve). Entries of past periods are dropped, and entries idle for ten minutes, unless a
// call is in flight or an own call's event is not reported published: dropping those calls
// would leave them out of the caller's total until the consumer counts them, however long the
// broker is down.
func (l *CreditLedger) Sync(ctx context.Context) {
	now := l.o.Now()
	start, _ := usage.PeriodOf(now)
	var jobs []syncJob
	l.mu.Lock()
	for k, en := range l.byKey {
		if en.held == 0 && (en.start.Before(start) || len(en.unsent) == 0 && now.Sub(en.used) > 10*time.Minute) {
			delete(l.byKey, k)
			continue
		}
		jobs = append(jobs, syncJob{k, en})
	}
	l.mu.Unlock()
	redisOK := l.rdb != nil
	if len(jobs) > 0 && l.rdb != nil {
		redisOK = l.syncRedis(ctx, jobs)
	}
	l.resolve(ctx, !redisOK)
}

// syncJob is an entry Sync re-reads, and its Redis key.
type syncJob struct {
	k  string
	en *ledgerEntry
}

// syncRedis re-reads the shared totals of jobs, seeding those Redis lost from the usage store;
// false when Redis does not answer.
func (l *CreditLedger) syncRedis(ctx context.Context, jobs []syncJob) bool {
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
		l.warnRedis("credit ledger: Redis unavailable; answering from the durable ledger and this replica's calls", err)
		return false
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
	return true
}

// resolveJob is an entry resolve reads: the ids of its calls in doubt it asks about and the
// entry's doubtGen then.
type resolveJob struct {
	en  *ledgerEntry
	ids []string
	gen uint64
}

// resolve reads the durable ledger, in one snapshot (usage.Store.Counted), for the entries
// whose total may include an own call in doubt (needsAsk), and, while Redis fails (noRedis),
// at most every Durable, for every entry: each period's total and "through", and which of the
// calls in doubt it counted. Those calls are forgotten, and the total and "through" advance
// to the snapshot's (forgetting the published calls it passes), so no call is counted twice
// and none that still waits is dropped; and while Redis fails, the totals still follow the
// consumer, so published calls leave memory as they are counted. (A call put in doubt while
// it reads is not asked about: should a failed publish have written it and the consumer
// counted it before the snapshot, it counts twice until it is asked about at the next sync.)
func (l *CreditLedger) resolve(ctx context.Context, noRedis bool) {
	now := l.o.Now()
	jobs, periods, ids, reask := l.resolveJobs(now, noRedis)
	if len(jobs) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 4*l.o.Timeout)
	totals, counted, err := l.src.Counted(rctx, periods, ids)
	cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.readAfter = now.Add(l.o.Durable)
		l.warnRedis("credit ledger: cannot read the durable ledger; answering from the last totals and this replica's calls", err)
		return
	}
	if reask { // every entry to ask again was: the next such read waits
		l.reaskAfter = now.Add(l.o.Durable)
	}
	for i, j := range jobs {
		j.en.settleCounted(j, totals[i], counted)
	}
}

// resolveJobs picks the entries resolve reads, and their periods and ids in doubt, and whether
// entries already asked about are asked again (reask).
func (l *CreditLedger) resolveJobs(now time.Time, noRedis bool) (jobs []resolveJob, periods []usage.PeriodRef, ids []string, reask bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Before(l.readAfter) {
		return nil, nil, nil, false
	}
	all := noRedis && !now.Before(l.fallbackAfter)
	if all {
		l.fallbackAfter = now.Add(l.o.Durable)
	}
	reask = all || !now.Before(l.reaskAfter)
	ids = []string{}
	for _, en := range l.byKey {
		if !all && !en.needsAsk(reask) {
			continue
		}
		j := resolveJob{en: en, gen: en.doubtGen}
		if en.doubt > 0 {
			j.ids = make([]string, 0, en.doubt)
			for id, c := range en.unsent {
				if c.doubt {
					j.ids = append(j.ids, id)
				}
			}
		}
		jobs, ids = append(jobs, j), append(ids, j.ids...)
		periods = append(periods, usage.PeriodRef{Entity: en.entity, Start: en.start})
	}
	return jobs, periods, ids, reask
}

// settleCounted applies a snapshot of the durable ledger read for j: the calls in doubt it
// counted are forgotten, then the total and "through" advance to the snapshot's. Both come
// from the snapshot that classified every call asked about, so each is counted once; the
// published calls "through" passes are forgotten as on any advance.
func (en *ledgerEntry) settleCounted(j resolveJob, t usage.Total, counted map[string]bool) {
	least := int64(math.MaxInt64)
	for _, id := range j.ids {
		c, ok := en.unsent[id]
		if !ok || !c.doubt {
			continue
		}
		if counted[id] {
			en.dropUnsent(id, c)
			continue
		}
		least = min(least, c.atMs)
	}
	en.advance(t.Used, t.ThroughMs)
	if en.doubtGen != j.gen { // a call was put in doubt during the read: ask about it next
		return
	}
	en.asked = t.Used
	if en.doubt > 0 {
		en.doubtMin = least
	}
}

func (l *CreditLedger) warnRedis(msg string, err error) {
	now := l.o.Now().Unix()
	if last := l.warn.Load(); now-last >= 10 && l.warn.CompareAndSwap(last, now) {
		l.o.Log.Warn(msg, "error", err)
	}
}
