package ws

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/coder/websocket"
)

// MaxMessageBytes is the largest client message read; a bigger one closes the connection
// (1009), the one input the protocol cannot answer and carry on from.
const MaxMessageBytes = 64 << 10

// conn is one WebSocket connection and the session it serves.
type conn struct {
	h     *Hub
	ws    *websocket.Conn
	cc    *corkConn // the socket under ws, to batch writes (never nil)
	id    Identity
	token string // owner token of the session in Redis
	q     *queue
	// quotaChecked: the connection has looked once whether its key's quota is spent (checkQuota);
	// later subscribes leave it to the writer.
	quotaChecked atomic.Bool
	// creditRecheck: the key's quota refused the connection's deliveries since its credits were
	// last looked at; the writer reads the credit ledger before they resume (resumeSpent).
	creditRecheck atomic.Bool
	v2            bool // a v2 stream connection: its one filter is fixed, no client messages change it
	// keyHash names the caller's key as the edge's invalidations do ("" when the edge sent none).
	keyHash string
	// admitted is when the connect was admitted, by the Redis server's clock: an invalidation
	// of its key later than it (less keyChangeGrace) ends it.
	admitted time.Time
	// closing is set once the connection is being closed for its key or credits: it takes no
	// more client messages and writes no more deliveries.
	closing atomic.Bool

	ctx    context.Context // ends when the connection ends
	cancel context.CancelFunc
	wctx   context.Context    // ends when the writer must stop
	wstop  context.CancelFunc // stops the writer
	// The writer runs on a goroutine only while there is something to send (an idle
	// connection keeps no writer stack); writing says one is running, writers waits for it.
	writing atomic.Bool
	writers sync.WaitGroup
	wmu     sync.Mutex // orders starting a writer before stopWriter's wait
	ping    *time.Timer

	mu      sync.Mutex
	sessID  string
	kind    string
	filters []store.FilterRec
	// seq and created are the session's v2 number and creation time, kept to store the
	// session again if Redis loses it.
	seq     int64
	created time.Time
	sub     *engine.Sub
	// owed is what a resume of the session has not queued yet (nil once it has, or when it
	// owes nothing): a save meanwhile keeps the session where the resume started.
	owed *owedResume
	// finished is set by the end's save as it takes the session: nothing is recorded for the
	// connection after it, so a claim or create finishing later hands its session back itself
	// and drops the subscription it made.
	finished bool

	// pend is what was delivered since the session's last save, charged by the next save
	// (settleCheckpoint, or the release's). inflight is what the running checkpoint took for its save, and
	// lets counts the releases of the connection's sessions (detach, giveUpSave): a release takes
	// inflight with pend and settles both by its own save, whose cursor covers them, and the
	// checkpoint that finds lets moved on since it took leaves its save undone. dmu guards the
	// three, and is held from a batch's first sent to its accounting, and from a checkpoint's
	// taking to its reading of the position, so a save's cursor covers exactly what it charges.
	dmu      sync.Mutex
	pend     delivered
	inflight delivered
	lets     uint64
	// smu serialises the connection's saves of its session: a checkpoint's, from its Apply to
	// settling its charge, with a release's, from taking the session to settling its own.
	smu sync.Mutex
	// usedSaved is the session's transfersUsed as its last save left it in Redis (from the
	// claim, plus what each checkpoint added), for a restore after Redis lost the session.
	usedSaved atomic.Int64
	// lastWrite is when a batch last reached the socket (unix ns); latePongs counts the pings
	// in a row answered late.
	lastWrite atomic.Int64
	latePongs atomic.Int32
	paused    atomic.Int64 // monoNow() until which the writer waits (the quota could not be checked)
	catching  atomic.Bool  // a reconnect is reading the topic back, or waiting for the connection it takes over to save
	released  atomic.Bool
	// slowCounted: the connection was counted as dropped slow once (a full queue and a timed-out
	// write can both happen before the kick ends it).
	slowCounted atomic.Bool
	// ended is closed once end has saved the session (nil for the REST calls' stand-in
	// connections, which never end).
	ended   chan struct{}
	limited map[string]time.Time // quota errors sent, per window type, until the window ends
	// kq is the key's quota entry; held the credits the batch being written took (writer only).
	kq            *keyQuota
	quotaReleased atomic.Bool // kq no longer counts the connection (releaseQuota)
	held          heldCredits
	batchAt       time.Time // when the batch being written started (writer only)
	takenAt       time.Time // when the writer took the batch up, before waiting for a quota lease
	staged        uint32    // deliveries timed, for sampling their stages (writer only)
	// bookE is the caller's labels book as last read, while the cache's gen is bookGen.
	bookE   *bookEntry
	bookGen uint64
	guard   msgGuard // the client's message limit (reader only)
}

func (c *conn) current() (*engine.Sub, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sub, c.sessID
}

// addSaved counts used transfers as saved in Redis for session id, unless c serves another
// session now. The check and the add hold c.mu, as attach's reset of usedSaved does: checked
// apart, an in-band reconnect between them would have the count of the session c left added to
// the one it took.
func (c *conn) addSaved(id string, used int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessID == id {
		c.usedSaved.Add(used)
	}
}

// settled is current, but nil while a resume has not queued everything the session was owed:
// until then the session's position is the one it is resumed from, not the engine's.
func (c *conn) settled() (*engine.Sub, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owed != nil {
		return nil, ""
	}
	return c.sub, c.sessID
}

// stored is session id as this connection serves it, served up to cursor, for the store to keep
// again when Redis lost it; false when the connection no longer serves id.
func (c *conn) stored(id string, cursor map[int]int64) (store.Session, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessID != id {
		return store.Session{}, false
	}
	return c.storedLocked(cursor), true
}

// storedLocked is stored for the session the connection serves (c.mu held).
func (c *conn) storedLocked(cursor map[int]int64) store.Session {
	return store.Session{ID: c.sessID, KeyID: c.id.KeyID, UserID: c.id.UserID, Kind: c.kind, Seq: c.seq, Created: c.created,
		Used: c.usedSaved.Load(), Filters: append([]store.FilterRec{}, c.filters...), Cursor: cursor, HasCursor: cursor != nil}
}

func (c *conn) window() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h.windowOf(c.kind)
}

// windowOf is how long a session of kind waits for a reconnect.
func (h *Hub) windowOf(kind string) time.Duration {
	if kind == KindV2 {
		return h.o.V2Window
	}
	return h.o.Window
}

// route is the route pattern the connection's deliveries are metered under.
func (c *conn) route() string {
	if c.v2 {
		return RouteV2
	}
	return Route
}

func (c *conn) send(o ...out) { c.q.push(o...) }

func (c *conn) ack(msgID, message string, data any) {
	c.send(out{raw: encode(TypeAck, Ack{MessageID: msgID, Success: true, Message: message, Data: data})})
}

func (c *conn) fail(msgID string, e *ProtocolError) {
	c.send(out{raw: encode(TypeError, ErrorPayload{Code: e.Code, Message: e.Message, MessageID: msgID})})
}

// start makes the connection writable and starts its keepalive; from then on end may be
// called.
func (c *conn) start() {
	c.wctx, c.wstop = context.WithCancel(context.Background())
	c.kq = c.h.quotas.attach(c.id.KeyID)
	c.q.wake = c.wake
	c.ping = time.AfterFunc(c.h.o.PingInterval, c.onPing)
}

// wake starts a writer goroutine unless one is running.
func (c *conn) wake() {
	if c.writing.Load() {
		// The running writer takes it: drain looks at the queue again after letting go.
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wctx.Err() != nil || !c.writing.CompareAndSwap(false, true) {
		return
	}
	c.writers.Add(1)
	c.h.writers.run(c)
}

// drain writes until the queue is empty, then lets the connection go; a message queued
// between the last look and letting go starts the next writer through wake.
func (c *conn) drain() {
	defer c.writers.Done()
	for {
		for c.wctx.Err() == nil {
			n, err := c.writeBatch(c.wctx)
			if err != nil {
				if c.ctx.Err() == nil {
					reason := writeFailedReason(err)
					if reason == slowWriteReason && !c.released.Load() && c.slowCounted.CompareAndSwap(false, true) {
						c.h.o.Metrics.slowDropped(slowWriteTimeout)
					}
					c.kick(reason)
				}
				return // writing stays set: nothing writes on a failed connection
			}
			if n == 0 {
				break
			}
		}
		c.writing.Store(false)
		if c.wctx.Err() != nil || !c.hasWork() || !c.writing.CompareAndSwap(false, true) {
			return
		}
	}
}

func (c *conn) onPing() {
	if c.wctx.Err() != nil {
		return
	}
	c.keepalive()
	c.ping.Reset(c.h.o.PingInterval)
}

// stopWriter stops the writer and waits for it; false when it did not stop within d.
func (c *conn) stopWriter(d time.Duration) bool {
	c.wmu.Lock()
	c.wstop()
	c.wmu.Unlock()
	c.ping.Stop()
	return c.waitWriter(d)
}

// waitWriter waits for the writer to stop; false when it did not within d.
func (c *conn) waitWriter(d time.Duration) bool {
	done := make(chan struct{})
	go func() { c.writers.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// run reads the client's messages until the connection ends, then ends it. It returns once
// the connection's end is over (an end begun elsewhere, a kick, included), so the hub counts
// the connection until its session is saved.
func (c *conn) run() {
	code, reason := c.readLoop()
	c.end(code, reason)
	<-c.ctx.Done()
}

// end stops the writer, saves the session and what it is owed, and closes the connection.
func (c *conn) end(code websocket.StatusCode, reason string) {
	c.endAs(code, reason, false)
}

// endAs is end; saveFirst keeps the socket open until the session is saved even when the save
// waits for a turn (not when Redis is failing).
//
// The socket is closed after the save when the save can start at once: a client told its
// connection ended may reconnect to another replica at once, and finds its session saved there.
// When the save must wait for a turn (a backlog) or is given up (Redis failing), the socket is
// closed first, so a backlog holds no sockets; a reconnect to this replica still waits for the
// save (takeOver waits on ended, not on the socket).
func (c *conn) endAs(code websocket.StatusCode, reason string, saveFirst bool) {
	if !c.released.CompareAndSwap(false, true) {
		return
	}
	if !c.stopWriter(time.Second) && !c.finishWrite() {
		// The writer is stuck on a client that does not read: cut the connection under it.
		_ = c.ws.CloseNow()
		c.writers.Wait()
	}
	c.releaseQuota()
	closed := false
	c.saveAfter(func(failing bool) {
		if failing || !saveFirst {
			closed = true
			// The close waits for the client's answer: not the save's business.
			go func() { _ = c.ws.Close(code, reason) }()
		}
	})
	if c.ended != nil {
		close(c.ended) // saved: a reconnect waits no longer (the close waits for the client's answer)
	}
	if !closed {
		_ = c.ws.Close(code, reason)
	}
	c.cancel()
}

// finishWrite ends the socket write a stopped writer is blocked in (a client reading slowly, or
// not at all) at the end of the message it is in, given one more write timeout as a timed-out
// write is (corkConn.finishFrame), and waits for the writer that long: a client that reads
// slowly then gets whole messages and the close frame with its code and reason (an overflowed
// queue's 1008 among them) instead of a cut connection. false when the writer is still stuck.
func (c *conn) finishWrite() bool {
	c.cc.interrupt()
	return c.waitWriter(c.h.o.WriteTimeout + time.Second)
}

// saveAfter saves the session and what it is owed (detach) and stops counting the connection
// for its key, in one of the hub's save turns. The turn is waited for as long as it takes while
// Redis works: every save holding one ends within the saver's timeout, so the queue moves, while
// a session left unsaved makes its reconnect resume from its last checkpoint (transfers sent
// again) or, never saved yet, from the new connection's position (transfers lost). While Redis
// fails (saver), the save is given up at once: the session is let go unsaved, and counted.
// early (nil: nothing) runs first when the save cannot start at once; failing: it is given up.
func (c *conn) saveAfter(early func(failing bool)) {
	s := c.h.saves
	s.pending.Add(1)
	c.h.o.Metrics.savePending(1)
	defer func() { s.pending.Add(-1); c.h.o.Metrics.savePending(-1) }()
	if early != nil && !s.ready() {
		early(s.isFailing())
	}
	ok, probe := s.acquire()
	if !ok {
		c.giveUpSave()
		return
	}
	defer s.release()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	err := c.detach(ctx, true)
	if err != nil {
		s.unsaved.Add(1)
		c.h.o.Metrics.saveFailedAs(saveErr)
	}
	s.record(errors.Join(err, c.h.o.Store.Disconnect(ctx, c.id.KeyID, c.token)), probe)
}

// giveUpSave lets the connection's session go unsaved (Redis failing): it leaves the engine and
// this replica's owners, and stays in Redis as its last checkpoint left it, owned by this
// connection until a reconnect claims it. What was delivered since that checkpoint is charged
// (the client had it); a reconnect sends it again and charges it again.
func (c *conn) giveUpSave() {
	ctx, cancel := context.WithTimeout(context.Background(), c.h.saves.timeout)
	defer cancel()
	c.smu.Lock()
	id := c.unserve(ctx, true)
	if id != "" {
		c.h.disown(id, c)
		c.h.saves.unsaved.Add(1)
		c.h.o.Metrics.saveFailedAs(saveGivenUp)
	}
	c.charge(c.takeReleased())
	c.smu.Unlock()
	// Best effort, outside the save turns: when Redis works again before the breaker closes, the
	// key's count drops now rather than at its expiry (a key at its connection limit would be
	// refused reconnects meanwhile); when it is failing, the call fails within a second and the
	// count expires.
	dctx, dcancel := context.WithTimeout(context.Background(), time.Second)
	defer dcancel()
	_ = c.h.o.Store.Disconnect(dctx, c.id.KeyID, c.token)
}

// releaseQuota stops counting the connection for its key's quota on this replica (its writer
// has stopped): the key's last connection here gives back the credits the replica holds.
func (c *conn) releaseQuota() {
	if c.kq != nil && c.quotaReleased.CompareAndSwap(false, true) {
		c.h.quotas.detach(c.kq)
	}
}

// goAway is the replica shutting down: the session is saved for another replica and the
// client told 1001. The client reconnects to another replica, so its socket is kept until the
// session is saved, even while the save waits for a turn (Shutdown's deadline bounds the wait),
// unless Redis is failing.
func (c *conn) goAway() {
	c.endAs(websocket.StatusGoingAway, "server shutting down; reconnect with your sessionId", true)
}

// kick ends the connection because it cannot go on (taken over, too slow).
func (c *conn) kick(reason string) {
	go c.end(websocket.StatusPolicyViolation, reason)
}

// readLoop reads client messages and has each handled, in order, on a goroutine of its own:
// handling (decoding, compiling a filter, Redis calls) grows a stack several times deeper than
// reading does, and the reader, which lives as long as the connection, would keep that stack
// while the connection idles.
//
// It returns the close code and reason to end the connection with: 1007 for a text message
// that is not UTF-8 (RFC 6455 8.1: the endpoint fails the connection; coder/websocket does not
// check), else a normal closure.
func (c *conn) readLoop() (websocket.StatusCode, string) {
	c.ws.SetReadLimit(MaxMessageBytes)
	for {
		typ, b, err := c.ws.Read(c.ctx)
		if err != nil {
			return websocket.StatusNormalClosure, ""
		}
		if typ == websocket.MessageText && !utf8.Valid(b) {
			return websocket.StatusInvalidFramePayloadData, "text message is not valid UTF-8"
		}
		aside(func() { c.handle(b) })
	}
}

// aside runs fn on a goroutine of its own and waits for it, so the deep stack fn grows is let
// go with that goroutine instead of kept by the caller (see readLoop).
func aside(fn func()) {
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	<-done
}

func (c *conn) handle(b []byte) {
	if c.closing.Load() || !c.admitMessage(b) {
		return
	}
	req, err := Decode(b)
	var pe *ProtocolError
	if errors.As(err, &pe) {
		c.fail(req.ID, pe)
		return
	}
	if c.v2 {
		c.fail(req.ID, perr(CodeInvalidPayload, "a v2 stream's filter is fixed when it is created; %s is not available here", req.Type))
		return
	}
	switch req.Type {
	case TypeSubscribe:
		err = c.subscribe(req)
	case TypeUnsubscribe:
		err = c.unsubscribe(req)
	case TypeReconnect:
		err = c.reconnect(req)
	}
	if err == nil || errors.Is(err, errEnded) {
		return
	}
	if errors.As(err, &pe) {
		c.fail(req.ID, pe)
		return
	}
	c.h.o.Log.Error("stream request failed", "type", req.Type, "key", c.id.KeyID, "error", err)
	c.fail(req.ID, perr(CodeInternal, "the request could not be completed; retry"))
}

// keepalive pings the client on a goroutine of its own (a ping waits for the pong, which
// must not hold deliveries back). The hub's heartbeats keep the connection counted for its key.
func (c *conn) keepalive() {
	if c.catching.Load() {
		// The reader is busy on a reconnect (reading the topic back, waiting for the connection
		// it takes over to save) and answers no pong until it is done; the connection is not
		// judged meanwhile.
		return
	}
	go func() {
		start := time.Now().UnixNano()
		pctx, cancel := context.WithTimeout(c.ctx, c.h.o.PingInterval)
		err := c.ws.Ping(pctx)
		cancel()
		if err == nil {
			c.latePongs.Store(0)
			return
		}
		// A client reading through a backlog answers the ping only once it reaches it: while
		// batches are still being written to it, a late pong is forgiven up to maxLatePongs
		// times in a row; a client that takes nothing and answers nothing is dropped at once.
		late := c.latePongs.Add(1)
		if c.ctx.Err() == nil && (c.lastWrite.Load() < start || late >= maxLatePongs) {
			c.kick("no pong: the client stopped answering pings")
		}
	}()
}

// maxLatePongs is how many pings in a row a client still being written to may answer late.
const maxLatePongs = 3

// batchMark is one message of a batch: where its bytes end in the batch, whether it is a
// delivery the queue holds in flight, and whether it took a credit (and when the broker took it)
// and in which hour: a batch spanning the hour's turn takes credits of both.
type batchMark struct {
	end              int
	inflight, credit bool
	r                *engine.Rendered
	hour             time.Time
}

var marksPool = sync.Pool{New: func() any { m := make([]batchMark, 0, 64); return &m }}

// heldCredits are quota credits a batch took at once and has not used yet.
type heldCredits struct {
	n    int64
	hour time.Time
}

// maxBatchCredits is the most credits a batch takes at once.
const maxBatchCredits = 64

// writeBatch writes what is queued, up to corkMax bytes, with one write to the socket
// rather than one per message; its deliveries count as sent once that write returns (when
// it fails part way, those whose bytes all went out count as sent: none is sent twice).
func (c *conn) writeBatch(ctx context.Context) (n int, err error) {
	if c.closing.Load() {
		return 0, nil
	}
	if c.isPaused() {
		return c.writeControl()
	}
	if !c.q.pending() {
		return 0, nil
	}
	c.takenAt = time.Now()
	if !c.h.quotas.ready(c.kq) {
		// A lease is taken before the batch starts: a ping corked behind a Redis round trip
		// would wait with it. A failure is reported by the write that needs the credit.
		_ = c.h.quotas.prime(c.ctx, c.kq, c.id.Tier)
	}
	c.batchAt = time.Now()
	mp := marksPool.Get().(*[]batchMark)
	defer func() { *mp = (*mp)[:0]; marksPool.Put(mp) }()
	c.cc.cork()
	n, werr := c.fillBatch(ctx, mp)
	written, err := c.cc.uncork()
	if written > 0 {
		c.lastWrite.Store(time.Now().UnixNano())
	}
	c.release(c.settle(*mp, written, err))
	if err == nil {
		err = werr
	}
	return n, err
}

// release gives back what the batch took and did not deliver, each to the hour it was taken
// in (a batch may take credits on both sides of the hour's turn): the credits it did not
// reach, and those of transfers batched but not written (unsent: they stay owed, and are
// charged when sent).
func (c *conn) release(unsent []heldCredits) {
	c.h.quotas.giveBack(c.kq, c.held.hour, c.held.n)
	for _, u := range unsent {
		c.h.quotas.giveBack(c.kq, u.hour, u.n)
	}
	c.held = heldCredits{}
}

// writeControl writes, in one batch, the acks and errors waiting while the writer is paused
// on the quota: the deliveries wait for a credit, the answers to the client's messages do not.
func (c *conn) writeControl() (n int, err error) {
	c.cc.cork()
	for c.cc.buffered() < corkMax {
		o, ok := c.q.nextControl()
		if !ok {
			break
		}
		if err = c.writeMsg(o); err != nil {
			break
		}
		n++
	}
	written, uerr := c.cc.uncork()
	if written > 0 {
		c.lastWrite.Store(time.Now().UnixNano())
	}
	if uerr != nil {
		return n, uerr
	}
	return n, err
}

// fillBatch puts queued messages into the corked batch until it is full or the queue empty.
func (c *conn) fillBatch(ctx context.Context, marks *[]batchMark) (n int, err error) {
	for ctx.Err() == nil && c.cc.buffered() < corkMax {
		if n > 0 && c.held.n == 0 && !c.h.quotas.ready(c.kq) {
			break // what is batched goes out before a lease is waited for
		}
		o, ok := c.q.next()
		if !ok {
			return n, nil
		}
		credited, err := c.write(o)
		if errors.Is(err, errPaused) {
			return n, nil
		}
		if err != nil {
			return n, err // what was batched before it is still written
		}
		n++
		*marks = append(*marks, batchMark{c.cc.buffered(), o.item.R != nil, credited, o.item.R, c.held.hour})
	}
	return n, nil
}

// settle counts what a batch delivered: every message whose bytes all reached the socket. It
// returns how many of the batch's transfers took a credit and were not written, by the hour
// the credit was taken in.
func (c *conn) settle(marks []batchMark, written int, err error) (unsent []heldCredits) {
	var sent int
	var credits int64
	var tookHours [2]heldCredits // a batch spans at most an hour's turn
	took := tookHours[:0]
	now := c.h.o.Now()
	for i, m := range marks {
		if err != nil && m.end > written {
			for _, u := range marks[i:] {
				if u.credit {
					unsent = addHour(unsent, u.hour, 1)
				}
			}
			break
		}
		if m.inflight {
			sent++
		}
		if m.credit {
			credits++
			took = addHour(took, m.hour, 1)
			c.staged++
			c.h.o.Metrics.timed(m.r, c.staged%stageEvery == 0, c.takenAt, c.batchAt, now)
		}
	}
	c.h.o.Metrics.deliveredN(credits)
	c.dmu.Lock()
	c.q.sentFirst(sent)
	c.accountLocked(took, now)
	c.dmu.Unlock()
	return unsent
}

// write puts one message in the batch; a transfer first takes a credit of the key's quota
// (the batch takes them several at once). credited reports a transfer written, to be counted
// once the batch is sent.
func (c *conn) write(o out) (credited bool, err error) {
	if !o.credit {
		return false, c.writeMsg(o)
	}
	if c.held.n == 0 {
		want := int64(min(c.q.waiting()+1, maxBatchCredits))
		got, hour, r, err := c.h.quotas.take(c.ctx, c.kq, c.id.Tier, want)
		if errors.Is(err, errLeaseContended) {
			// Not a failure: the key's other writers used the leases first. The transfer
			// stays owed and the writer tries again after a pause, telling the client nothing.
			c.q.unnext(o)
			c.pauseWriter()
			return false, errPaused
		}
		if err != nil {
			// The transfer stays owed: it goes back first in line and the writer pauses.
			c.h.o.Log.Error("stream quota unavailable", "key", c.id.KeyID, "error", err)
			c.q.unnext(o)
			c.pauseWriter()
			if err := c.writeRaw(encode(TypeError, ErrorPayload{Code: CodeInternal, Message: "quota check failed; transfers are paused"})); err != nil {
				return false, err
			}
			return false, errPaused
		}
		if r.limitType != "" {
			// The queue drops deliveries while the refusal stands on this replica (until Redis
			// is asked again), not to the reset: credits given back meanwhile are served.
			c.h.o.Metrics.quotaRefused(r.limitType)
			c.q.refuse(r.until)
			c.creditRecheck.Store(true)
			return false, c.limit(r.limitType, r.reset)
		}
		c.held = heldCredits{got, hour}
		if c.resumeSpent() {
			// The transfer stays owed; the credits taken go back as the batch ends.
			c.q.unnext(o)
			c.close(CloseCreditLimit, creditLimitReason)
			return false, errPaused
		}
	}
	c.held.n--
	if o.item.R == nil {
		return true, c.writeRaw(o.raw) // a replayed message, rendered when it was saved
	}
	return true, c.writeTransfer(o.item)
}

// writeTransfer puts a delivery in the batch: the Transfer JSON rendered once for every client
// (or, when the caller has labels on its addresses, with them) behind the filter's alertId.
func (c *conn) writeTransfer(it engine.Item) error {
	tj := c.transferJSON(it.R, c.batchAt)
	var a [96]byte
	if c.cc.appendTransfer(strconv.AppendQuote(a[:0], it.FilterID), tj) {
		return nil
	}
	return c.writeRaw(appendTransfer(nil, it.FilterID, tj))
}

// errPaused ends a batch whose next transfer could not take a quota credit.
var errPaused = errors.New("writer paused")

// quotaRetry is how long a writer waits after the quota could not be checked.
const quotaRetry = time.Second

// pauseWriter stops writing for quotaRetry and wakes the writer after it.
func (c *conn) pauseWriter() {
	c.paused.Store(monoNow() + int64(quotaRetry))
	time.AfterFunc(quotaRetry, c.wake)
}

// hasWork reports whether a writer has something to send now: while paused, only acks and errors.
func (c *conn) hasWork() bool {
	if c.closing.Load() {
		return false
	}
	if c.isPaused() {
		return c.q.pendingControl()
	}
	return c.q.pending()
}

func (c *conn) isPaused() bool { return monoNow() < c.paused.Load() }

// monoEpoch anchors monoNow: durations since it are read on the monotonic clock, as the resume
// timer runs, so a wall clock stepped back during a pause cannot outlast the timer's wake.
var monoEpoch = time.Now()

// monoNow is the monotonic time in nanoseconds since monoEpoch.
func monoNow() int64 { return int64(time.Since(monoEpoch)) }

func (c *conn) writeRaw(b []byte) error {
	if c.cc.appendText(b) {
		// Corked, the message joins the batch (uncork bounds the socket write by the write
		// timeout).
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.h.o.WriteTimeout)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// writeMsg writes a message that takes no credit: an ack or error, or a quota notice.
func (c *conn) writeMsg(o out) error {
	if o.notice == nil {
		return c.writeRaw(o.raw)
	}
	if !c.h.o.Now().Before(o.notice.reset) {
		return nil // the quota has reset since the subscribe found it spent
	}
	return c.limit(o.notice.limitType, o.notice.reset)
}

// quotaNotice is a TIER_RATE_LIMITED notice queued by a subscribe that found the quota spent.
type quotaNotice struct {
	limitType string
	reset     time.Time
}

// checkQuota looks once per connection, as it first subscribes (before the engine matches anything for
// it), whether the key's quota is spent. If so the queue drops deliveries from now on, as it
// does once the writer finds the quota spent: a burst matched before the writer has reached
// its first delivery would otherwise fill the queue with transfers that are not delivered and
// not owed, and close the connection as a slow client. It returns the notice to queue after
// the answer to the request, or nil; a failed check is left to the writer, which pauses on it.
func (c *conn) checkQuota() *out {
	if c.q.refused() || c.quotaChecked.Swap(true) {
		return nil
	}
	kq := c.kq
	if kq == nil {
		kq = c.h.quotas.key(c.id.KeyID)
	}
	ctx, cancel := context.WithTimeout(c.ctx, quotaCallTimeout) // bounded as every quota call is
	defer cancel()
	r, err := c.h.quotas.spent(ctx, kq, c.id.Tier)
	if err != nil || r.limitType == "" {
		return nil
	}
	c.q.refuse(r.until)
	c.creditRecheck.Store(true)
	return &out{notice: &quotaNotice{limitType: r.limitType, reset: r.reset}}
}

// limit tells the client once per window that its quota is spent; the transfer is dropped.
func (c *conn) limit(lt string, reset time.Time) error {
	if c.limited == nil {
		c.limited = map[string]time.Time{}
	}
	if until, ok := c.limited[lt]; ok && c.h.o.Now().Before(until) {
		return nil
	}
	c.limited[lt] = reset
	in := int64(reset.Sub(c.h.o.Now()).Seconds() + 0.999)
	return c.writeRaw(encode(TypeError, ErrorPayload{Code: CodeTierRateLimited, LimitType: lt, ResetIn: &in,
		Message: "stream quota reached (" + lt + "); transfers resume when it resets"}))
}

// renderUnsent appends to raw the transfer messages of items, with the caller's own labels
// where it has any on a transfer's addresses. The caller's book is looked up once for them
// all; it is this connection's caller's, keyed by its user, and a session is claimed again
// only with the key that created it, so the replay shows labels to none but their owner. It
// runs off the writer goroutine (detach, reached from the reader on a reconnect while the
// writer runs), so it leaves the writer's cached book alone.
func (c *conn) renderUnsent(raw [][]byte, items []engine.Item) [][]byte {
	if len(items) == 0 {
		return raw
	}
	b := c.sharedBook()
	for _, it := range items {
		raw = append(raw, appendTransfer(nil, it.FilterID, transferWith(it.R, b)))
	}
	return raw
}

func identityContext(ctx context.Context, id Identity) context.Context {
	return httpx.WithIdentity(ctx, id)
}
