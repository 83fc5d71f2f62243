package ws

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/feed"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/orphans"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/segmentio/kafka-go"
)

// Options configure a hub.
type Options struct {
	Engine    *engine.Engine
	Store     *store.Store
	Transfers feed.Topic // where a session taken over catches up from
	// Orphans are the blocks reorgs orphaned: a resume replays no transfer of one (nil: none
	// known). The engine skips them in its own matching (engine.Options.Orphaned).
	Orphans *orphans.Set
	Labels  Labels   // nil: no user labels or user entities
	Meter   *Meter   // nil: nothing metered
	Metrics *Metrics // nil: no OpenTelemetry instruments
	Served  *chains.Set
	Quotas  func(tier string) store.Limits
	// Window is how long a session waits for a reconnect (API.md: 5 minutes); V2Window the
	// same for v2 streams (10 minutes).
	Window, V2Window time.Duration
	// QueueSize is the deliveries a connection may have waiting (default 1024), plus
	// QueuePerFilter for each filter of its session, at most QueueMax (0: no cap besides
	// QueueSize's and QueuePerFilter's).
	QueueSize, QueuePerFilter, QueueMax int
	// SendBuffer is the kernel send buffer (SO_SNDBUF) of each connection's socket, 0 for the
	// system's default: what sits there counts as delivered, so a small one keeps a client
	// that stops reading from being charged for what it never reads, and fills its queue
	// (dropping it as slow) soon after it stops.
	SendBuffer     int
	PingInterval   time.Duration // keepalive ping period (default 20s)
	WriteTimeout   time.Duration // a write slower than this drops the client (default 10s)
	Writers        int           // goroutines writing to connections (default 4 per core)
	MaxConnsPerKey int           // live connections per key across replicas (default 20)
	MaxFilters     int           // filters per session (default 50)
	// MaxSessionsPerKey caps the live sessions and v2 streams a key may create over REST or by
	// a subscribe, and those a connection may store again after Redis lost them (default 100).
	MaxSessionsPerKey int
	// MaxSessionFilterBytes bounds the JSON a session's filters are stored in (default 64 KiB);
	// MessageRate and MessageBurst limit each connection's client messages (default 10 a
	// second, a burst of 50). See guard.go.
	MaxSessionFilterBytes int
	MessageRate           float64
	MessageBurst          int
	// CreditLimit answers a tier's credits a billing period and whether they are a limit (the
	// edge's tier table: tiers.Tier.CreditLimit): a caller of a limited tier whose billed entity
	// has spent them (the edge's live ledger, package ledger) is refused streams, and its open
	// connections are closed (CloseCreditLimit). Nil: no tier is limited.
	CreditLimit func(tier string) (int64, bool)
	Tokens      *TokenCheck // refuses a fresh filter's unknown pricing ids (nil: none checked)
	LeaseSize   int64       // quota credits taken from Redis at once (default 16)
	// QuotaRecheck is how long a key's quota refusal read from Redis stands on this replica
	// before Redis is asked again (never past its period's end), and how often the replica
	// looks whether keys it holds credits of were refused elsewhere (default 1s).
	QuotaRecheck time.Duration
	Checkpoint   time.Duration // how often sessions' positions are saved (default 5s)
	MaxCatchUp   int           // most records a reconnect reads again (default 2,000,000)
	// CatchUpParallel is how many resumes of this replica read the transfer topic back at once
	// (default 2), one per key: the others wait their turn (catchUpTurn).
	CatchUpParallel int
	// OffsetsTTL is how long a read of the transfer topic's end or first offsets is shared by
	// connects and resumes (default 1s).
	OffsetsTTL time.Duration
	Log        *slog.Logger
	Now        func() time.Time
}

func (o *Options) defaults() {
	if o.Window <= 0 {
		o.Window = 5 * time.Minute
	}
	if o.V2Window <= 0 {
		o.V2Window = 10 * time.Minute
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 1024
	}
	o.QueuePerFilter, o.QueueMax, o.SendBuffer = max(o.QueuePerFilter, 0), max(o.QueueMax, 0), max(o.SendBuffer, 0)
	if o.PingInterval <= 0 {
		o.PingInterval = 20 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.Writers <= 0 {
		o.Writers = 4 * runtime.GOMAXPROCS(0)
	}
	if o.MaxConnsPerKey <= 0 {
		o.MaxConnsPerKey = 20
	}
	if o.MaxFilters <= 0 {
		o.MaxFilters = 50
	}
	if o.MaxSessionsPerKey <= 0 {
		o.MaxSessionsPerKey = 100
	}
	o.guardDefaults()
	if o.LeaseSize <= 0 {
		o.LeaseSize = 16
	}
	if o.QuotaRecheck <= 0 {
		o.QuotaRecheck = time.Second
	}
	if o.Checkpoint <= 0 {
		o.Checkpoint = 5 * time.Second
	}
	if o.OffsetsTTL <= 0 {
		o.OffsetsTTL = time.Second
	}
	if o.MaxCatchUp <= 0 {
		o.MaxCatchUp = 2_000_000
	}
	if o.CatchUpParallel <= 0 {
		o.CatchUpParallel = 2
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.CreditLimit == nil {
		o.CreditLimit = func(string) (int64, bool) { return 0, false }
	}
	if o.Quotas == nil {
		o.Quotas = func(string) store.Limits { return store.Limits{Hourly: 10_000, Monthly: 1_000_000} }
	}
}

// Hub holds this replica's connections.
type Hub struct {
	o      Options
	quotas *quotas
	labels *labelCache
	ends   *topicEnds // the transfer topic's end, shared by fresh connects and resumes
	starts *topicEnds // the transfer topic's first retained offsets, shared by resumes
	keys   keyWatch   // keys invalidated recently
	// writers run the connections' writers on goroutines kept between batches.
	writers *writerPool

	mu    sync.Mutex
	conns map[*conn]struct{}
	// owners is the connection serving each session on this replica, so a reconnect can end
	// the connection it replaces, and wait for it to save the session, before claiming it.
	owners map[string]*conn
	// turns serialize the take-overs of each session on this replica (lockSession).
	turns   map[string]*sessionTurn
	closing bool
	wg      sync.WaitGroup
	// saves bounds the sessions saved at once, so thousands of connections ending together
	// (a shutdown, a network cut) queue there instead of timing out on the Redis pool, and gives
	// the queued saves up while Redis fails.
	saves *saver
	// addMu guards callers: per caller, the additions changes not yet applied to its
	// filters and its filter builds in progress (AdditionsChanged).
	addMu   sync.Mutex
	callers map[string]*callerAdds
	// rebuilds bounds the callers' filter rebuilds running at once (rebuildWorkers).
	rebuilds chan struct{}
	// catchUpKeys serialize each key's catch-ups on this replica (h.mu guards it), and
	// catchUps bounds them all (catchUpTurn).
	catchUpKeys map[string]*sessionTurn
	catchUps    chan struct{}
	// parse is filter.Parse (a test counts the parses of a rebuild).
	parse func(filter.Raw, filter.Options) (filter.Spec, error)
	// rangeRead, when set, replaces Transfers.Range for the catch-ups (a test's topic).
	rangeRead func(ctx context.Context, part int, from, to int64, handle func(kafka.Message)) ([]feed.Gap, error)
}

// saveLimit is how long a connection's save at disconnect may take once it has its turn.
const saveLimit = 30 * time.Second

// NewHub returns a hub; RunCheckpoints saves positions, Shutdown ends every connection.
func NewHub(o Options) *Hub {
	o.defaults()
	h := &Hub{o: o, conns: map[*conn]struct{}{}, owners: map[string]*conn{}, turns: map[string]*sessionTurn{},
		catchUpKeys: map[string]*sessionTurn{}, catchUps: make(chan struct{}, o.CatchUpParallel), saves: newSaver(), callers: map[string]*callerAdds{}, rebuilds: make(chan struct{}, rebuildWorkers), quotas: newQuotas(o.Store, o.Quotas, o.LeaseSize, o.Now, o.QuotaRecheck, o.Log),
		labels: newLabelCache(5 * time.Minute), ends: newTopicEnds(func(ctx context.Context) (map[int]int64, error) {
			return o.Transfers.Offsets(ctx, true)
		}, o.OffsetsTTL, time.Now), starts: newTopicEnds(func(ctx context.Context) (map[int]int64, error) {
			return o.Transfers.Offsets(ctx, false)
		}, o.OffsetsTTL, time.Now), writers: newWriterPool(o.Writers, time.Second, writerStall), parse: filter.Parse}
	return h
}

// writerStall is how long woken connections wait while every writer is stuck on a slow
// socket before the pool adds a writer: about a frame of the latency a subscriber expects.
const writerStall = 20 * time.Millisecond

// ErrClosing means the replica is shutting down.
var ErrClosing = errors.New("stream-fanout is shutting down")

func (h *Hub) add(c *conn) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return ErrClosing
	}
	h.conns[c] = struct{}{}
	h.o.Metrics.opened()
	h.wg.Add(1)
	return nil
}

func (h *Hub) remove(c *conn) {
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
	h.o.Metrics.closed()
	h.wg.Done()
}

// own records c as the connection serving session id on this replica.
func (h *Hub) own(id string, c *conn) {
	h.mu.Lock()
	h.owners[id] = c
	h.mu.Unlock()
}

// disown forgets c as the connection serving session id (unless another one took it since).
func (h *Hub) disown(id string, c *conn) {
	h.mu.Lock()
	if h.owners[id] == c {
		delete(h.owners, id)
	}
	h.mu.Unlock()
}

// sessionTurn is a one-at-a-time turn (a session's take-over, a key's catch-up): a one-slot
// channel held by whoever has the turn, and how many hold or wait for it (the entry goes at
// none).
type sessionTurn struct {
	slot    chan struct{}
	waiters int
}

// lockSession waits for session id's take-over turn on this replica (or for ctx to end) and
// returns the function that gives it back.
func (h *Hub) lockSession(ctx context.Context, id string) (unlock func(), err error) {
	return h.takeTurn(ctx, h.turns, id)
}

// takeTurn waits for turns[name] (h.mu guards turns) or for ctx to end, and returns the
// function that gives it back.
func (h *Hub) takeTurn(ctx context.Context, turns map[string]*sessionTurn, name string) (unlock func(), err error) {
	h.mu.Lock()
	t := turns[name]
	if t == nil {
		t = &sessionTurn{slot: make(chan struct{}, 1)}
		turns[name] = t
	}
	t.waiters++
	h.mu.Unlock()
	leave := func() {
		h.mu.Lock()
		if t.waiters--; t.waiters == 0 {
			delete(turns, name)
		}
		h.mu.Unlock()
	}
	select {
	case t.slot <- struct{}{}:
		return func() { <-t.slot; leave() }, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

// catchUpTurn waits for a turn to read the transfer topic back for a resume of key's (or for
// ctx, the connection's, to end): a catch-up holds what it matched, up to MaxCatchUp records'
// worth, so a replica runs at most CatchUpParallel at once, and one per key, so that a key's
// connections resuming together take one turn at a time and leave the others to other keys.
func (h *Hub) catchUpTurn(ctx context.Context, key string) (release func(), err error) {
	unlock, err := h.takeTurn(ctx, h.catchUpKeys, key)
	if err != nil {
		return nil, err
	}
	select {
	case h.catchUps <- struct{}{}:
		return func() { <-h.catchUps; unlock() }, nil
	case <-ctx.Done():
		unlock()
		return nil, ctx.Err()
	}
}

// owner is the connection serving session id on this replica, nil when none does.
func (h *Hub) owner(id string) *conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.owners[id]
}

func (h *Hub) snapshot() []*conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		out = append(out, c)
	}
	return out
}

// Len is the number of open connections on this replica.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// Shutdown closes every connection with 1001 (going away) after saving its session (the
// positions it was served up to and what it was still owed), so another replica can take it
// over. The feed must have stopped first, so nothing more is matched meanwhile.
func (h *Hub) Shutdown(ctx context.Context) {
	h.mu.Lock()
	h.closing = true
	h.mu.Unlock()
	// Connections are closed side by side: a close waits for the client's answer.
	sem := make(chan struct{}, 256)
	conns := h.snapshot()
	started := 0
dispatch:
	for _, c := range conns {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done(): // the deadline bounds Shutdown: the rest are cut with the process
			break dispatch
		}
		started++
		go func() {
			defer func() { <-sem }()
			c.goAway()
		}()
	}
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	// Saves still waiting are given up with the process: counted with those that failed (ended
	// connections, with a session or not), beside the connections never told to go away.
	if n, cut := h.saves.unsaved.Swap(0)+h.saves.pending.Load(), len(conns)-started; n > 0 || cut > 0 {
		h.o.Log.Error("connections not saved at shutdown; their sessions' reconnects resume from their last checkpoint",
			"saves_pending_or_failed", n, "not_closed", cut)
	}
	h.quotas.returnAll(ctx)
}

// reportUnsaved logs how many sessions were not saved at disconnect since the last report.
func (h *Hub) reportUnsaved() {
	if n := h.saves.unsaved.Swap(0); n > 0 {
		h.o.Log.Warn("sessions not saved at disconnect (Redis failing or slow); their reconnects resume from their last checkpoint",
			"sessions", n, "pending", h.saves.pending.Load(), "redis_failing", h.saves.isFailing())
	}
}

// RunCheckpoints saves every attached session's positions periodically, so a replica that
// dies without Shutdown costs its sessions at most a few seconds of repeated transfers, keeps
// this replica's connections counted for their keys, and checks the credits of those of tiers
// with a credit limit (checkCredits).
func (h *Hub) RunCheckpoints(ctx context.Context) error {
	t := time.NewTicker(h.o.Checkpoint)
	defer t.Stop()
	hb := time.NewTicker(connTTL / 3)
	defer hb.Stop()
	rep := time.NewTicker(saveReportEvery)
	defer rep.Stop()
	qs := time.NewTicker(h.o.QuotaRecheck)
	defer qs.Stop()
	cr := time.NewTicker(creditCheckEvery)
	defer cr.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-cr.C:
			h.checkCredits(ctx)
		case <-qs.C:
			h.quotas.sweep(ctx)
		case <-rep.C:
			h.reportUnsaved()
		case <-t.C:
			h.checkpoint(ctx)
		case <-hb.C:
			h.heartbeat(ctx)
		}
	}
}

// heartbeat refreshes every open connection's entry in its key's connection count with one
// pipelined round trip: thousands of connections opened together would otherwise refresh
// together, one call each, and crowd the Redis pool the deliveries' quota leases need.
func (h *Hub) heartbeat(ctx context.Context) {
	byKey := map[string][]string{}
	for _, c := range h.snapshot() {
		byKey[c.id.KeyID] = append(byKey[c.id.KeyID], c.token)
	}
	if err := h.o.Store.HeartbeatAll(ctx, byKey, connTTL); err != nil && ctx.Err() == nil {
		h.o.Log.Warn("refreshing the connection counts failed", "error", err)
	}
}

type mark struct {
	c      *conn
	id     string
	cursor map[int]int64
	d      delivered // what the save covers, taken with its cursor
	lets   uint64    // c's releases when d was taken
}

func (h *Hub) checkpoint(ctx context.Context) {
	conns := h.snapshot()
	var marks []mark
	ok := h.o.Engine.Do(ctx, func() {
		for _, c := range conns {
			sub, id := c.settled()
			if sub == nil {
				continue
			}
			// Taken with the cursor, under the lock a batch is sent and accounted under: the
			// save covers exactly what it charges.
			c.dmu.Lock()
			d, lets := c.takeInflight()
			marks = append(marks, mark{c, id, h.servedAt(c, sub), d, lets})
			c.dmu.Unlock()
		}
	})
	if !ok {
		return
	}
	for _, m := range marks {
		h.save(ctx, m)
	}
}

// save is a checkpoint's save of m's session. A release of the session since m was taken (the
// connection's end, an in-band reconnect, shutdown) saved it with a cursor covering m and
// settled m's deliveries with its own: m is left undone, as its save would be refused.
func (h *Hub) save(ctx context.Context, m mark) {
	m.c.smu.Lock()
	defer m.c.smu.Unlock()
	if !m.c.endInflight(m.lets) {
		return
	}
	// A session Redis lost (restarted empty, flushed) is stored again from the connection,
	// which holds its filters and position: it is not taken over, so it goes on.
	restore := func() (store.Session, bool) { return m.c.stored(m.id, m.cursor) }
	err := h.o.Store.Apply(ctx, m.id, m.c.token, m.c.window(), store.Update{Cursor: m.cursor, Used: m.d.n, Restore: restore, SessionCap: h.o.MaxSessionsPerKey})
	if err == nil {
		m.c.addSaved(m.id, m.d.n)
	}
	m.c.settleCheckpoint(m.d, err)
	if reason, gone := goneReason(err); gone {
		m.c.kick(reason)
	} else if err != nil && ctx.Err() == nil {
		h.o.Log.Warn("saving a session's position failed", "session", m.id, "error", err)
	}
}

// servedAt is where c's session, subscribed as sub, has been served up to: the engine's
// position for it, less what c's queue still holds (engine goroutine only).
func (h *Hub) servedAt(c *conn, sub *engine.Sub) map[int]int64 {
	cur := h.o.Engine.Served(sub)
	for p, off := range c.q.lowest() {
		if off < cur[p] {
			cur[p] = off
		}
	}
	return cur
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Identity is who a connection acts for.
type Identity = httpx.Identity

func itoa(n int) string { return strconv.Itoa(n) }
