// Package indexer follows one EVM chain through a JSON-RPC node and publishes what it decodes:
// it backfills from a start block, follows the head at a confirmation depth, detects reorgs
// from block hashes and resumes exactly after a restart. The cursor moves only after Kafka
// acknowledged a range's events, so every block is published at least once and consumers,
// which are idempotent, see each fact once.
package indexer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/progress"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/ingest/internal/evm"
	"github.com/chainintel/chainintel/services/ingest/internal/market"
	"github.com/chainintel/chainintel/services/ingest/internal/store"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/holiman/uint256"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Config shapes an indexer.
type Config struct {
	Chain chains.Chain
	// Confirmations is how far behind the head blocks are ingested.
	Confirmations uint64
	// StartBlock is where a chain without a cursor starts; nil means the confirmed head.
	StartBlock *uint64
	// BatchBlocks is how many blocks one round fetches, publishes and commits.
	BatchBlocks int
	// PollInterval is the wait when caught up with the confirmed head.
	PollInterval time.Duration
	// ReorgWindow is how many recent block hashes are kept; a reorg deeper than that stops
	// the indexer with an error.
	ReorgWindow uint64
	// Balances reads exact balances of every touched (address, token) pair.
	Balances bool
	// ContractFlags looks up whether transfer parties are contracts (eth_getCode, cached).
	ContractFlags bool
	// Traces says whether every block's call traces are read (debug_traceBlockByHash with the
	// callTracer) for its internal transfers: native value moved by contract calls, whose
	// parties' balances are then read like any other touched pair. The zero value is TracesOff.
	Traces TracesMode
	// CodeRecheck is how long, in chain time (block timestamps), an address found without code
	// keeps that answer before a transfer naming it has it read again (default
	// DefaultCodeRecheck).
	CodeRecheck time.Duration
	// Meter records the indexer's metrics; nil records none.
	Meter metric.Meter
	// ProgressInterval is how often progress is logged and its gauges updated (default 10s):
	// job "ingest", done = the cursor block, total = the confirmed head, so remaining is the
	// blocks behind it.
	ProgressInterval time.Duration
}

// TracesMode is Config.Traces.
type TracesMode string

// Values of TracesMode.
const (
	TracesOff TracesMode = "off" // as is the zero value, or any other
	// TracesOn reads traces; Run fails when the node does not serve them.
	TracesOn TracesMode = "on"
	// TracesAuto reads traces when the node serves them, asked once when Run starts.
	TracesAuto TracesMode = "auto"
)

// Publisher sends events and returns once Kafka acknowledged them.
type Publisher interface {
	Publish(ctx context.Context, events ...eventbus.Event) error
}

// Indexer indexes one chain. It is not safe for concurrent use; run one per chain.
type Indexer struct {
	cfg    Config
	rpc    *evm.Client
	st     *store.Store
	mk     *market.Model
	pub    Publisher
	log    *slog.Logger
	tokens map[string]store.Token // published and committed
	fresh  map[string]store.Token // discovered this round, published with it
	pools  map[string]store.Pool
	code   *codeCache // committed rounds' answers
	round  *codeRound // this round's answers, taken by code once committed
	now    func() time.Time
	warned map[string]time.Time // pricing id → when a transfer of it was last reported unpriced
	traces bool                 // read call traces (Config.Traces, resolved when Run starts)

	blocksC, eventsC, reorgsC metric.Int64Counter
	transfersC, unpricedC     metric.Int64Counter
	prog                      *progress.Reporter
	cursorG, lagG, failingG   metric.Int64Gauge
	attrs                     metric.MeasurementOption

	lookupsC               metric.Int64Counter
	lookupOK, lookupFailed metric.MeasurementOption
}

// New returns an indexer.
func New(cfg Config, rpc *evm.Client, st *store.Store, mk *market.Model, pub Publisher, log *slog.Logger) *Indexer {
	if cfg.BatchBlocks <= 0 {
		cfg.BatchBlocks = 10
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 2 * time.Second
	}
	if cfg.ReorgWindow == 0 {
		cfg.ReorgWindow = 128
	}
	if cfg.CodeRecheck <= 0 {
		cfg.CodeRecheck = DefaultCodeRecheck
	}
	if log == nil {
		log = slog.Default()
	}
	x := &Indexer{cfg: cfg, rpc: rpc, st: st, mk: mk, pub: pub, log: log.With("chain", cfg.Chain.Name),
		tokens: map[string]store.Token{}, pools: map[string]store.Pool{}, code: newCodeCache(cfg.CodeRecheck), round: newCodeRound(), now: time.Now,
		warned: map[string]time.Time{}}
	m := cfg.Meter
	if m == nil {
		m = noop.NewMeterProvider().Meter("ingest")
	}
	x.blocksC, _ = m.Int64Counter("ingest_blocks_total", metric.WithDescription("blocks ingested and committed"))
	x.eventsC, _ = m.Int64Counter("ingest_events_total", metric.WithDescription("events published for committed blocks"))
	x.reorgsC, _ = m.Int64Counter("ingest_reorgs_total", metric.WithDescription("reorgs detected"))
	x.transfersC, _ = m.Int64Counter("ingest_transfers_total", metric.WithDescription("transfers published for committed blocks"))
	x.unpricedC, _ = m.Int64Counter("ingest_transfers_unpriced_total",
		metric.WithDescription("transfers of a token with a pricing id published without a USD value (no price at most 48 h old at the block's time)"))
	x.cursorG, _ = m.Int64Gauge("ingest_cursor_block", metric.WithDescription("last committed block"))
	x.lagG, _ = m.Int64Gauge("ingest_head_lag_blocks", metric.WithDescription("blocks between the node's head and the cursor"))
	// A round failing again and again (the node unreachable, a deep reorg) leaves the cursor and
	// the head lag as they were: this says the figures are stale.
	x.failingG, _ = m.Int64Gauge("ingest_failing_rounds", metric.WithDescription("indexing rounds failed in a row (0 after a round that did not fail)"))
	x.attrs = metric.WithAttributes(attribute.String("chain", cfg.Chain.Name))
	x.lookupsC, _ = m.Int64Counter("ingest_price_lookups_total",
		metric.WithDescription("calls to token-analytics for prices the market book misses, by outcome (failed: unreachable or still importing; the round is held and retried)"))
	x.lookupOK = metric.WithAttributes(attribute.String("chain", cfg.Chain.Name), attribute.String("outcome", "ok"))
	x.lookupFailed = metric.WithAttributes(attribute.String("chain", cfg.Chain.Name), attribute.String("outcome", "failed"))
	x.lookupsC.Add(context.Background(), 0, x.lookupOK)
	x.lookupsC.Add(context.Background(), 0, x.lookupFailed)
	// The counters start at 0 under the chain: increase() over a series born with its first
	// event (a chain's first reorg) sees no increase.
	for _, c := range []metric.Int64Counter{x.blocksC, x.eventsC, x.reorgsC, x.transfersC, x.unpricedC} {
		c.Add(context.Background(), 0, x.attrs)
	}
	x.prog = progress.New(progress.Options{Job: "ingest", Unit: "blocks", Attrs: []attribute.KeyValue{attribute.String("chain", cfg.Chain.Name)},
		Interval: cfg.ProgressInterval, Log: log, Meter: cfg.Meter})
	return x
}

// RecordFailing sets ingest_failing_rounds to n: a wait before the first round (for the price
// history's owner) counts as rounds failing in a row, as the rounds' own failures do.
func (x *Indexer) RecordFailing(ctx context.Context, n int64) { x.failingG.Record(ctx, n, x.attrs) }

// ErrDeepReorg says the node's chain diverges below every block hash kept.
var ErrDeepReorg = errors.New("reorg deeper than the kept block hashes")

// Run indexes until ctx ends, holding the chain's ingester lock (store.Lock): while another
// ingester of the chain holds it, Run stands by; when its session is lost, Run takes it again
// before the next round. Failed rounds are retried with backoff; nothing is skipped.
func (x *Indexer) Run(ctx context.Context) error {
	defer x.prog.Start(ctx)()
	if err := x.resolveTraces(ctx); err != nil || ctx.Err() != nil {
		return err
	}
	for {
		lock := x.lock(ctx)
		if lock == nil {
			return nil
		}
		x.runLocked(ctx, lock)
		lock.Release(context.WithoutCancel(ctx))
		if ctx.Err() != nil {
			return nil
		}
	}
}

// lock takes the chain's ingester lock, waiting while another ingester holds it; nil once ctx
// ended.
func (x *Indexer) lock(ctx context.Context) *store.Lock {
	chain := x.cfg.Chain.Name
	for tries := 0; ; tries++ {
		l, ok, err := x.st.TryLock(ctx, chain)
		switch {
		case ok:
			if tries > 0 {
				x.log.Info("took the ingester lock of the chain; indexing")
			}
			return l
		case err != nil && ctx.Err() == nil:
			x.log.Error("taking the ingester lock failed; retrying", "error", err)
		case err == nil && tries%30 == 0:
			x.log.Warn("another ingester of this chain holds its lock; standing by")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
		}
	}
}

// runLocked runs rounds while lock is held, until ctx ends or the lock's session is lost.
func (x *Indexer) runLocked(ctx context.Context, lock *store.Lock) {
	backoff := time.Second
	failing := int64(0)
	for {
		if err := lock.Held(ctx); err != nil {
			if ctx.Err() == nil {
				x.log.Error("lost the ingester lock; taking it again before the next round", "error", err)
			}
			return
		}
		progressed, err := x.Step(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := time.Duration(0)
		switch {
		case err != nil:
			x.log.Error("indexing round failed; retrying", "error", err, "retry_in", backoff)
			wait = backoff
			backoff = min(backoff*2, time.Minute)
			failing++
		case !progressed:
			wait = x.cfg.PollInterval
			backoff, failing = time.Second, 0
		default:
			backoff, failing = time.Second, 0
		}
		x.failingG.Record(ctx, failing, x.attrs)
		if wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}

// resolveTraces sets x.traces from Config.Traces, asking the node when it is not off; a node
// that cannot be asked is asked again with backoff (recorded as failing rounds), as a round is.
func (x *Indexer) resolveTraces(ctx context.Context) error {
	if x.cfg.Traces != TracesOn && x.cfg.Traces != TracesAuto {
		x.log.Info("call traces off: internal transfers are not indexed")
		return nil
	}
	backoff := time.Second
	for failing := int64(1); ; failing++ {
		served, why, err := x.rpc.SupportsTraces(ctx)
		switch {
		case err == nil && served:
			x.traces = true
			x.log.Info("call traces on: internal transfers are indexed", "traces", string(x.cfg.Traces))
			return nil
		case err == nil && x.cfg.Traces == TracesOn:
			return fmt.Errorf("traces required (INGEST_EVM_TRACES=on): %w: %s", evm.ErrNoTraces, why)
		case err == nil:
			x.log.Warn("the node serves no call traces: internal transfers are not indexed, nor balances changed only by them",
				"traces", string(x.cfg.Traces), "answer", why)
			return nil
		}
		x.log.Error("asking the node for a call trace failed; retrying", "error", err, "retry_in", backoff)
		x.failingG.Record(ctx, failing, x.attrs)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Minute)
	}
}

// round is the range of blocks one Step ingests.
type round struct {
	cur      store.Cursor
	hasCur   bool
	head     uint64
	next, to uint64
}

// Step runs one round: it ingests the next range of confirmed blocks, or handles a reorg. It
// reports whether it made progress.
func (x *Indexer) Step(ctx context.Context) (bool, error) {
	if done, err := x.finishRewind(ctx); err != nil || done {
		return done, err
	}
	r, ok, err := x.nextRound(ctx)
	if err != nil || !ok {
		return false, err
	}
	decoded, reorged, err := x.fetch(ctx, r)
	if err != nil {
		return false, err
	}
	if reorged {
		return true, x.reorg(ctx, r.cur, r.head)
	}
	reread, err := x.toReread(ctx, r, decoded)
	if err != nil {
		return false, err
	}
	x.fresh, x.round = map[string]store.Token{}, newCodeRound()
	events, newTokens, err := x.build(ctx, decoded, reread)
	if err != nil {
		return false, err
	}
	if err := x.save(ctx, r, decoded, events, newTokens); err != nil {
		return false, err
	}
	x.recordRound(ctx, r, decoded, len(events))
	return true, nil
}

// finishRewind completes a reorg that recorded its orphaned hashes but did not rewind (the
// process died, or the publish or the rewind failed, in between): committed blocks whose hashes
// are recorded as orphaned. Whether or not its Reorg went out, and whichever branch the node is
// on now, it publishes that Reorg again (consumers apply it twice harmlessly), moves the cursor
// back to the first such block's parent and queues the balances touched above it for re-reading,
// as the reorg would have done: the next rounds read the node's blocks from there, naming
// canonical again those it still has. It reports whether it rewound.
func (x *Indexer) finishRewind(ctx context.Context) (bool, error) {
	chain := x.cfg.Chain.Name
	cur, ok, err := x.st.Cursor(ctx, chain)
	if err != nil || !ok {
		return false, err
	}
	back, err := x.st.OrphanedAgain(ctx, chain, cur.Number)
	if err != nil || len(back) == 0 {
		return false, err
	}
	anc := store.Cursor{Number: back[0].Number - 1, Hash: back[0].ParentHash}
	above, err := x.st.Blocks(ctx, chain, back[0].Number, math.MaxInt64)
	if err != nil {
		return false, err
	}
	var reread []store.Pair
	for _, b := range above {
		reread = append(reread, b.Touched...)
	}
	if err := x.publishReorg(ctx, anc, above); err != nil {
		return false, err
	}
	if err := x.st.Rewind(ctx, chain, cur, anc, reread); err != nil {
		return false, err
	}
	x.reorgsC.Add(ctx, 1, x.attrs)
	x.log.Warn("reorg: finishing the rewind of blocks recorded as orphaned", "common_ancestor", anc.Number, "orphaned", len(above), "was_at", cur.Number)
	return true, nil
}

// nextRound reads the cursor and the head and picks the range of confirmed blocks to ingest;
// ok is false when there is none yet.
func (x *Indexer) nextRound(ctx context.Context) (r round, ok bool, err error) {
	r.cur, r.hasCur, err = x.st.Cursor(ctx, x.cfg.Chain.Name)
	if err != nil {
		return r, false, err
	}
	r.head, err = x.rpc.BlockNumber(ctx)
	if err != nil {
		return r, false, err
	}
	if r.head < x.cfg.Confirmations {
		return r, false, nil
	}
	target := r.head - x.cfg.Confirmations
	x.prog.SetTotal(int64(target))
	switch {
	case r.hasCur:
		r.next = r.cur.Number + 1
	case x.cfg.StartBlock != nil:
		r.next = *x.cfg.StartBlock
	default:
		r.next = target
	}
	if r.next > target {
		if r.hasCur {
			x.prog.Set(int64(r.cur.Number))
			x.lagG.Record(ctx, int64(r.head-r.cur.Number), x.attrs)
		}
		return r, false, nil
	}
	if !r.hasCur {
		x.prog.Set(int64(r.next) - 1)
	}
	r.to = min(r.next+uint64(x.cfg.BatchBlocks)-1, target)
	return r, true, nil
}

// fetch reads and decodes the round's blocks; reorged is true when the first one does not
// extend the cursor's block.
func (x *Indexer) fetch(ctx context.Context, r round) (decoded []*evm.Decoded, reorged bool, err error) {
	raws, err := x.rpc.Blocks(ctx, r.next, r.to)
	if err != nil {
		return nil, false, err
	}
	if x.traces {
		if err := x.rpc.Traces(ctx, raws); err != nil {
			return nil, false, err
		}
	}
	for i := 1; i < len(raws); i++ {
		if raws[i].Block.ParentHash != raws[i-1].Block.Hash {
			return nil, false, fmt.Errorf("block %d does not extend block %d: the node switched branch while answering", r.next+uint64(i), r.next+uint64(i)-1)
		}
	}
	if r.hasCur && evm.HashHex(raws[0].Block.ParentHash) != r.cur.Hash {
		return nil, true, nil
	}
	decoded = make([]*evm.Decoded, len(raws))
	for i, rb := range raws {
		if decoded[i], err = evm.Decode(x.cfg.Chain.Name, rb); err != nil {
			return nil, false, err
		}
	}
	return decoded, false, nil
}

// toReread lists the (holder, token) pairs whose balances must be read again: those of blocks
// orphaned since a crashed round wrote them, and those queued for a rebalance.
func (x *Indexer) toReread(ctx context.Context, r round, decoded []*evm.Decoded) ([]store.Pair, error) {
	chain := x.cfg.Chain.Name
	// Blocks written ahead by a round that crashed before its commit, and since replaced on
	// chain, were published: tell consumers they are orphaned.
	var reread []store.Pair
	stale, err := x.st.Blocks(ctx, chain, r.next, r.next+x.cfg.ReorgWindow)
	if err != nil {
		return nil, err
	}
	var orphans []store.Block
	for _, s := range stale {
		if s.Number <= r.to && s.Hash != decoded[s.Number-r.next].Hash {
			orphans = append(orphans, s)
		}
	}
	if len(orphans) > 0 {
		anc := store.Cursor{Number: r.next - 1, Hash: decoded[0].ParentHash}
		if err := x.publishReorg(ctx, anc, orphans); err != nil {
			return nil, err
		}
		for _, o := range orphans {
			reread = append(reread, o.Touched...)
		}
	}
	queued, err := x.st.Rebalance(ctx, chain)
	if err != nil {
		return nil, err
	}
	return append(reread, queued...), nil
}

// save writes the blocks ahead, publishes their events, then commits the cursor and new tokens.
func (x *Indexer) save(ctx context.Context, r round, decoded []*evm.Decoded, events []eventbus.Event, newTokens []store.Token) error {
	chain := x.cfg.Chain.Name
	recs := make([]store.Block, len(decoded))
	for i, d := range decoded {
		recs[i] = store.Block{Number: d.Number, Hash: d.Hash, ParentHash: d.ParentHash, Touched: pairs(d.Touched)}
	}
	if err := x.st.SaveBlocks(ctx, chain, recs); err != nil {
		return err
	}
	if err := x.announceCanonical(ctx, r.to); err != nil {
		return err
	}
	if err := x.pub.Publish(ctx, events...); err != nil {
		return fmt.Errorf("publish blocks %d..%d: %w", r.next, r.to, err)
	}
	last := decoded[len(decoded)-1]
	prune := uint64(0)
	if last.Number > x.cfg.ReorgWindow {
		prune = last.Number - x.cfg.ReorgWindow
	}
	var from *store.Cursor
	if r.hasCur {
		from = &r.cur
	}
	if err := x.st.Commit(ctx, chain, from, store.Cursor{Number: last.Number, Hash: last.Hash}, newTokens, prune); err != nil {
		return err
	}
	for _, t := range newTokens {
		x.tokens[t.Address] = t
	}
	x.code.commit(x.round, last.TimeMs)
	return nil
}

// recordRound updates the metrics and the progress line after a committed round.
func (x *Indexer) recordRound(ctx context.Context, r round, decoded []*evm.Decoded, events int) {
	last := decoded[len(decoded)-1]
	x.blocksC.Add(ctx, int64(len(decoded)), x.attrs)
	x.eventsC.Add(ctx, int64(events), x.attrs)
	x.cursorG.Record(ctx, int64(last.Number), x.attrs)
	x.lagG.Record(ctx, int64(r.head-last.Number), x.attrs)
	transfers := 0
	for _, d := range decoded {
		transfers += len(d.Transfers)
	}
	x.transfersC.Add(ctx, int64(transfers), x.attrs)
	x.prog.Set(int64(last.Number))
	x.prog.Count("transfers", int64(transfers))
	x.log.Debug("blocks ingested", "from", r.next, "to", r.to, "events", events, "head", r.head)
}

// reorg walks back from the cursor to the newest block whose hash the node still has,
// publishes the orphaned blocks and rewinds the cursor there.
func (x *Indexer) reorg(ctx context.Context, cur store.Cursor, head uint64) error {
	chain := x.cfg.Chain.Name
	oldest, ok, err := x.st.OldestBlock(ctx, chain)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("block %d's parent is not the cursor's block %s and no block hashes are kept: %w", cur.Number+1, cur.Hash, ErrDeepReorg)
	}
	lo := oldest
	if cur.Number > x.cfg.ReorgWindow && cur.Number-x.cfg.ReorgWindow > lo {
		lo = cur.Number - x.cfg.ReorgWindow
	}
	kept, err := x.st.Blocks(ctx, chain, lo, math.MaxInt64)
	if err != nil {
		return err
	}
	hi := min(cur.Number, head) // the new branch may be shorter than the old one
	if hi < lo {
		return fmt.Errorf("the node's head %d is below every kept block (from %d): %w", head, lo, ErrDeepReorg)
	}
	hdrs, err := x.rpc.Headers(ctx, lo, hi)
	if err != nil {
		return err
	}
	canon := make(map[uint64]string, len(hdrs))
	for _, h := range hdrs {
		canon[uint64(h.Number)] = evm.HashHex(h.Hash)
	}
	var anc *store.Cursor
	for i := len(kept) - 1; i >= 0; i-- {
		if kept[i].Number <= cur.Number && canon[kept[i].Number] == kept[i].Hash {
			anc = &store.Cursor{Number: kept[i].Number, Hash: kept[i].Hash}
			break
		}
	}
	if anc == nil {
		return fmt.Errorf("no kept block between %d and %d is on the node's chain: %w", lo, cur.Number, ErrDeepReorg)
	}
	var orphans []store.Block
	var reread []store.Pair
	for _, k := range kept {
		if k.Number > anc.Number {
			orphans = append(orphans, k)
			reread = append(reread, k.Touched...)
		}
	}
	if err := x.publishReorg(ctx, *anc, orphans); err != nil {
		return err
	}
	if err := x.st.Rewind(ctx, chain, cur, *anc, reread); err != nil {
		return err
	}
	x.reorgsC.Add(ctx, 1, x.attrs)
	x.log.Warn("reorg: blocks orphaned", "common_ancestor", anc.Number, "orphaned", len(orphans), "was_at", cur.Number)
	return nil
}

// publishReorg publishes orphans as orphaned above anc. Their hashes are recorded first, so
// that whenever the chain goes back to one of them, ingest, when it ingests that block again,
// names it canonical again (announceCanonical), a restart in between included. The node's new
// branch is not named canonical here: the node may leave it before ingest reads it, and a
// consumer would then keep blocks no Reorg ever orphans.
func (x *Indexer) publishReorg(ctx context.Context, anc store.Cursor, orphans []store.Block) error {
	if err := x.st.RecordOrphans(ctx, x.cfg.Chain.Name, orphans); err != nil {
		return err
	}
	r := &eventsv1.Reorg{Chain: x.cfg.Chain.Name, CommonAncestorNumber: anc.Number, CommonAncestorHash: anc.Hash, DetectedAtMs: x.now().UnixMilli()}
	id := "reorg:" + x.cfg.Chain.Name + ":" + anc.Hash
	for _, o := range orphans {
		r.Orphaned = append(r.Orphaned, &eventsv1.Reorg_Block{Number: o.Number, Hash: o.Hash})
		id += ":" + o.Hash[2:10]
	}
	if err := x.pub.Publish(ctx, eventbus.Event{Topic: eventsv1.TopicReorgs, Key: x.cfg.Chain.Name, Msg: r, ID: id}); err != nil {
		return fmt.Errorf("publish reorg at %d: %w", anc.Number, err)
	}
	return nil
}

// announceCanonical publishes, before a round's events, a Reorg naming canonical again every
// stored block up to to (the round's blocks, just saved, and the committed ones) whose hash was
// published as orphaned: the chain went back to it, and without this every consumer would keep
// the block's re-published rows void. It orphans nothing; its common ancestor is the first such
// block's parent. The hashes stay recorded until the round's commit, so a round that fails
// after this names them again; consumers apply a Reorg twice harmlessly. The event id carries
// the orphanings' sequence numbers: the same announcement retried has the same id, one after a
// later orphaning of the same hashes another.
func (x *Indexer) announceCanonical(ctx context.Context, to uint64) error {
	chain := x.cfg.Chain.Name
	back, err := x.st.OrphanedAgain(ctx, chain, to)
	if err != nil || len(back) == 0 {
		return err
	}
	first := back[0]
	r := &eventsv1.Reorg{Chain: chain, CommonAncestorNumber: first.Number - 1, CommonAncestorHash: first.ParentHash, DetectedAtMs: x.now().UnixMilli()}
	id := "reorg:" + chain + ":canonical"
	for _, b := range back {
		r.Canonical = append(r.Canonical, &eventsv1.Reorg_Block{Number: b.Number, Hash: b.Hash})
		id += ":" + b.Hash[2:10] + "." + strconv.FormatInt(b.Seq, 10)
	}
	if err := x.pub.Publish(ctx, eventbus.Event{Topic: eventsv1.TopicReorgs, Key: chain, Msg: r, ID: id}); err != nil {
		return fmt.Errorf("publish blocks %d.. canonical again: %w", first.Number, err)
	}
	x.log.Warn("reorg: blocks orphaned earlier are canonical again", "blocks", len(back), "from", first.Number, "to", back[len(back)-1].Number)
	return nil
}

func pairs(ts []evm.Touch) []store.Pair {
	out := make([]store.Pair, len(ts))
	for i, t := range ts {
		out[i] = store.Pair{Address: t.Address, Token: t.Token}
	}
	return out
}

// build enriches decoded blocks (pool tokens, token metadata, contract flags, prices,
// balances) and returns the events to publish, in block order, and the tokens discovered.
func (x *Indexer) build(ctx context.Context, blocks []*evm.Decoded, reread []store.Pair) ([]eventbus.Event, []store.Token, error) {
	chain := x.cfg.Chain.Name
	if err := x.loadPools(ctx, blocks); err != nil {
		return nil, nil, err
	}
	if err := x.fillPrices(ctx, blocks); err != nil {
		return nil, nil, err
	}
	newTokens, err := x.loadTokens(ctx, blocks)
	if err != nil {
		return nil, nil, err
	}
	if x.cfg.ContractFlags {
		if err = x.loadCode(ctx, blocks); err != nil {
			return nil, nil, err
		}
	}
	contracts, err := x.contractFacts(ctx, blocks, newTokens, x.round.appeared)
	if err != nil {
		return nil, nil, err
	}
	var balances [][]*eventsv1.BalanceObservation
	if x.cfg.Balances {
		if balances, err = x.readBalances(ctx, blocks, reread); err != nil {
			return nil, nil, err
		}
	}
	var ev []eventbus.Event
	for _, t := range newTokens {
		m := &eventsv1.Token{Chain: chain, Address: t.Address, Name: t.Name, Symbol: t.Symbol, Decimals: t.Decimals,
			PricingId: x.mk.PricingID(chain, t.Address), NonStandard: t.NonStandard, DiscoveredBlock: t.DiscoveredBlock}
		ev = append(ev, eventbus.Event{Topic: eventsv1.TopicTokens, Key: chain + ":" + t.Address, Msg: m, ID: eventsv1.TokenEventID(m)})
	}
	for _, c := range contracts {
		ev = append(ev, eventbus.Event{Topic: eventsv1.TopicContracts, Key: chain + ":" + c.Address, Msg: c, ID: eventsv1.ContractEventID(c)})
	}
	nativeID := x.nativeID()
	for bi, d := range blocks {
		at := time.UnixMilli(d.TimeMs)
		nativePrice, nativeOK := x.mk.PriceAt(nativeID, at)
		suffix := ":" + d.Hash
		// Every indexed block, an empty one too: the chain's progress (token-analytics' tip on
		// /networks/status), which its transactions cannot tell past a block without any.
		blk := &eventsv1.Block{Chain: chain, Number: d.Number, Hash: d.Hash, TimeMs: d.TimeMs, Transactions: uint32(len(d.Transactions))}
		ev = append(ev, eventbus.Event{Topic: eventsv1.TopicBlocks, Key: chain, Msg: blk, ID: eventsv1.BlockEventID(blk)})
		for _, t := range d.Transactions {
			if nativeOK {
				t.ValueUsd = usd(t.Value, x.cfg.Chain.NativeDecimals, nativePrice)
				t.FeeUsd = usd(t.Fee, x.cfg.Chain.NativeDecimals, nativePrice)
			}
			ev = append(ev, eventbus.Event{Topic: eventsv1.TopicTransactions, Key: eventsv1.ChainKey(chain, t.Hash), Msg: t, ID: eventsv1.TransactionEventID(t)})
		}
		for _, t := range d.Transfers {
			x.fillTransfer(t, nativeID, at)
			ev = append(ev, eventbus.Event{Topic: eventsv1.TopicTransfers, Key: eventsv1.ChainKey(chain, t.TransactionHash), Msg: t, ID: eventsv1.TransferEventID(t)})
		}
		for _, s := range d.Swaps {
			x.fillSwap(s, at)
			ev = append(ev, eventbus.Event{Topic: eventsv1.TopicSwaps, Key: eventsv1.ChainKey(chain, s.TransactionHash), Msg: s, ID: eventsv1.SwapEventID(s)})
		}
		if balances != nil {
			for _, o := range balances[bi] {
				ev = append(ev, eventbus.Event{Topic: eventsv1.TopicBalances, Key: chain + ":" + o.Address, Msg: o,
					ID: "balance:" + chain + ":" + o.Address + ":" + o.TokenAddress + suffix})
			}
		}
	}
	return ev, newTokens, nil
}

// nativeID is the pricing id of the chain's native coin: the registry's, else the catalogue's.
func (x *Indexer) nativeID() string {
	if id := x.mk.PricingID(x.cfg.Chain.Name, ""); id != "" {
		return id
	}
	return x.cfg.Chain.NativePricingID
}

// fillPrices has the market book read from the price history's owner the prices the blocks
// need and it does not hold (market.Model.Fill): a broker that kept only recent prices, or a
// start before the owner's imports were done, then holds the round (the error retries it)
// instead of publishing transfers without USD values the history has.
func (x *Indexer) fillPrices(ctx context.Context, blocks []*evm.Decoded) error {
	chain := x.cfg.Chain.Name
	native := x.nativeID()
	var wants []market.Want
	for _, d := range blocks {
		at := time.UnixMilli(d.TimeMs)
		wants = append(wants, market.Want{ID: native, At: at})
		for _, t := range d.Transfers {
			if t.TokenAddress != "" {
				wants = append(wants, market.Want{ID: x.mk.PricingID(chain, t.TokenAddress), At: at})
			}
		}
		for _, sw := range d.Swaps {
			if p := x.pools[sw.ContractAddress]; p.OK {
				wants = append(wants, market.Want{ID: x.mk.PricingID(chain, p.Token0), At: at}, market.Want{ID: x.mk.PricingID(chain, p.Token1), At: at})
			}
		}
	}
	calls, err := x.mk.Fill(ctx, wants)
	ok := int64(calls)
	if err != nil {
		ok--
		x.lookupsC.Add(ctx, 1, x.lookupFailed)
	}
	x.lookupsC.Add(ctx, ok, x.lookupOK)
	return err
}

func (x *Indexer) token(addr string) (store.Token, bool) {
	if t, ok := x.fresh[addr]; ok {
		return t, true
	}
	t, ok := x.tokens[addr]
	return t, ok
}

func (x *Indexer) fillTransfer(t *eventsv1.Transfer, nativeID string, at time.Time) {
	c := x.cfg.Chain
	var id string
	if t.TokenAddress == "" {
		t.TokenName, t.TokenSymbol, t.TokenDecimals = c.NativeName, c.NativeSymbol, c.NativeDecimals
		id = nativeID
	} else {
		tk, _ := x.token(t.TokenAddress)
		t.TokenName, t.TokenSymbol, t.TokenDecimals = tk.Name, tk.Symbol, tk.Decimals
		id = x.mk.PricingID(c.Name, t.TokenAddress)
		if tk.NonStandard && tk.Decimals == 0 {
			id = "" // decimals unknown: no unit value, so no USD value either
		}
	}
	t.TokenId = id
	t.FromIsContract, t.ToIsContract = x.code.contract(x.round, t.From), x.code.contract(x.round, t.To)
	if p, ok := x.mk.PriceAt(id, at); ok {
		t.HistoricalUsd = usd(t.Amount, t.TokenDecimals, p)
	} else if id != "" {
		x.unpriced(id, at)
	}
}

// unpriced counts a transfer of a token with a pricing id left without a USD value and warns
// at most once an hour per pricing id, with the newest price's time: a price feed that stopped,
// or a broker that lost market.prices.v1, shows in the log instead of silently.
func (x *Indexer) unpriced(id string, at time.Time) {
	x.unpricedC.Add(context.Background(), 1, x.attrs)
	now := x.now()
	if last, ok := x.warned[id]; ok && now.Sub(last) < time.Hour {
		return
	}
	x.warned[id] = now
	newest := "none"
	if t, ok := x.mk.Newest(id); ok {
		newest = t.UTC().Format(time.RFC3339)
	}
	x.log.Warn("transfers left without a USD value: no price of the token at most max_age old at the block's time",
		"pricing_id", id, "block_time", at.UTC().Format(time.RFC3339), "newest_price", newest, "max_age", market.MaxAge.String())
}

func (x *Indexer) fillSwap(s *eventsv1.Swap, at time.Time) {
	chain := x.cfg.Chain.Name
	p := x.pools[s.ContractAddress]
	if !p.OK {
		s.Valid = false
		return
	}
	t0, _ := x.token(p.Token0)
	t1, _ := x.token(p.Token1)
	s.Token0, s.Token0Name, s.Token0Symbol, s.Token0Decimals = p.Token0, t0.Name, t0.Symbol, t0.Decimals
	s.Token1, s.Token1Name, s.Token1Symbol, s.Token1Decimals = p.Token1, t1.Name, t1.Symbol, t1.Decimals
	s.Token0Id, s.Token1Id = x.mk.PricingID(chain, p.Token0), x.mk.PricingID(chain, p.Token1)
	// Value the swap by its first priced side.
	if pr, ok := x.mk.PriceAt(s.Token0Id, at); ok && s.Token0Id != "" {
		s.HistoricalUsd = usd(trimSign(s.Amount0), s.Token0Decimals, pr)
	} else if pr, ok := x.mk.PriceAt(s.Token1Id, at); ok && s.Token1Id != "" {
		s.HistoricalUsd = usd(trimSign(s.Amount1), s.Token1Decimals, pr)
	}
}

func trimSign(s string) string {
	if len(s) > 0 && s[0] == '-' {
		return s[1:]
	}
	return s
}

// usd values an exact base-10 amount with decimals at price.
func usd(amount string, decimals int32, price float64) *float64 {
	var v uint256.Int
	if err := v.SetFromDecimal(amount); err != nil {
		return nil
	}
	f := v.Float64() / math.Pow10(int(decimals)) * price
	return &f
}

func (x *Indexer) loadPools(ctx context.Context, blocks []*evm.Decoded) error {
	chain := x.cfg.Chain.Name
	var missing []string
	seen := map[string]bool{}
	for _, d := range blocks {
		for _, p := range d.Pools {
			if _, ok := x.pools[p]; !ok && !seen[p] {
				seen[p] = true
				missing = append(missing, p)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	cached, err := x.st.Pools(ctx, chain, missing)
	if err != nil {
		return err
	}
	var ask []string
	for _, p := range missing {
		if c, ok := cached[p]; ok {
			x.pools[p] = c
		} else {
			ask = append(ask, p)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	res, err := x.rpc.PoolTokens(ctx, ask)
	if err != nil {
		return err
	}
	save := make([]store.Pool, len(res))
	for i, r := range res {
		save[i] = store.Pool{Address: r.Pool, Token0: r.Token0, Token1: r.Token1, OK: r.OK}
		x.pools[r.Pool] = save[i]
	}
	return x.st.SavePools(ctx, chain, save)
}

// loadTokens makes sure every token the blocks mention (transferred or paired in a pool) is in
// the cache, asking the chain about new ones. Those are returned to be published.
func (x *Indexer) loadTokens(ctx context.Context, blocks []*evm.Decoded) ([]store.Token, error) {
	chain := x.cfg.Chain.Name
	var missing []string
	first := map[string]uint64{}
	add := func(t string, n uint64) {
		if t == "" {
			return
		}
		if _, ok := x.token(t); ok {
			return
		}
		if _, ok := first[t]; !ok {
			first[t] = n
			missing = append(missing, t)
		}
	}
	for _, d := range blocks {
		for _, t := range d.Tokens {
			add(t, d.Number)
		}
		for _, p := range d.Pools {
			if pl := x.pools[p]; pl.OK {
				add(pl.Token0, d.Number)
				add(pl.Token1, d.Number)
			}
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	cached, err := x.st.Tokens(ctx, chain, missing)
	if err != nil {
		return nil, err
	}
	var ask []string
	for _, t := range missing {
		if c, ok := cached[t]; ok {
			x.tokens[t] = c
		} else {
			ask = append(ask, t)
		}
	}
	if len(ask) == 0 {
		return nil, nil
	}
	metas, err := x.rpc.TokenMetadata(ctx, ask)
	if err != nil {
		return nil, err
	}
	out := make([]store.Token, len(metas))
	for i, m := range metas {
		out[i] = store.Token{Address: m.Address, Name: m.Name, Symbol: m.Symbol, Decimals: m.Decimals, NonStandard: m.NonStandard,
			DiscoveredBlock: first[m.Address]}
		// Visible to this round; persisted (and never published again) once Kafka acknowledged it.
		x.fresh[m.Address] = out[i]
	}
	return out, nil
}

// loadCode reads, at the round's last block, whether the parties of the blocks' transfers hold
// contract code, unless the cache's answer is current at that block's time, into the round's
// answers; those where code appeared after an earlier read found none (contracts created inside
// a call) are listed in x.round.appeared, their records published with the round.
func (x *Indexer) loadCode(ctx context.Context, blocks []*evm.Decoded) error {
	last := blocks[len(blocks)-1]
	var qs []evm.BalanceQuery
	seen := map[string]bool{}
	for _, d := range blocks {
		for _, t := range d.Transfers {
			for _, a := range []string{t.From, t.To} {
				if !seen[a] && !x.code.current(a, last.TimeMs) {
					seen[a] = true
					qs = append(qs, evm.BalanceQuery{Address: common.HexToAddress(a), Block: last.Number})
				}
			}
		}
	}
	if len(qs) == 0 {
		return nil
	}
	contract, err := x.rpc.Contracts(ctx, qs)
	if err != nil {
		return err
	}
	for i, q := range qs {
		x.code.read(x.round, evm.Addr(q.Address), last.TimeMs, contract[i])
	}
	return nil
}

// contractCandidate is a contract whose code contractFacts reads.
type contractCandidate struct {
	c    *eventsv1.Contract
	tx   *eventsv1.Transaction // the creating transaction, when it created the contract itself
	d    *evm.Decoded
	prev bool // also read the code one block earlier
}

// contractCandidates lists, once each, the blocks' creations (by transactions, then, when call
// traces are read, inside calls), the new tokens and the addresses where code appeared.
func (x *Indexer) contractCandidates(blocks []*evm.Decoded, newTokens []store.Token, appeared []string) []contractCandidate {
	chain := x.cfg.Chain.Name
	var cs []contractCandidate
	known := map[string]bool{}
	byNumber := map[uint64]*evm.Decoded{}
	for _, d := range blocks {
		byNumber[d.Number] = d
		for _, t := range d.Transactions {
			if t.ContractCreated == "" {
				continue
			}
			known[t.ContractCreated] = true
			cs = append(cs, contractCandidate{c: &eventsv1.Contract{Chain: chain, Address: t.ContractCreated, Deployer: t.From, DeployTxHash: t.Hash}, tx: t, d: d})
		}
	}
	for _, d := range blocks {
		for _, cr := range d.InternalCreations {
			if known[cr.Address] {
				continue
			}
			known[cr.Address] = true
			cs = append(cs, contractCandidate{c: &eventsv1.Contract{Chain: chain, Address: cr.Address, Deployer: cr.Sender, DeployTxHash: cr.TxHash,
				InternalDeployer: cr.Creator}, d: d})
		}
	}
	for _, tk := range newTokens {
		d := byNumber[tk.DiscoveredBlock]
		if known[tk.Address] || d == nil {
			continue
		}
		known[tk.Address] = true
		cs = append(cs, contractCandidate{c: &eventsv1.Contract{Chain: chain, Address: tk.Address}, d: d, prev: d.Number > 0})
	}
	last := blocks[len(blocks)-1]
	for _, a := range appeared {
		if !known[a] {
			known[a] = true
			cs = append(cs, contractCandidate{c: &eventsv1.Contract{Chain: chain, Address: a}, d: last})
		}
	}
	return cs
}

// contractFacts reads the code and EIP-1967 implementation slot of every contract the blocks
// created (a creating transaction's receipt names it, or, with call traces, a CREATE inside a
// call), of every token first seen in them and of every address where code appeared since an
// earlier read found none, sets the creations' bytecode sizes, and returns the contracts to
// publish. A token whose code is absent one block before its first sight, and whose creation
// no trace named, was created in that block, inside a call: its creation is the transaction of
// its first transfer, sent by the deployer to the contract that created it (without traces a
// factory reached through another contract shows as the contract the transaction called). An
// address where code appeared is published at the round's last block, without its creation.
func (x *Indexer) contractFacts(ctx context.Context, blocks []*evm.Decoded, newTokens []store.Token, appeared []string) ([]*eventsv1.Contract, error) {
	cs := x.contractCandidates(blocks, newTokens, appeared)
	if len(cs) == 0 {
		return nil, nil
	}
	var qs []evm.BalanceQuery
	for _, s := range cs {
		qs = append(qs, evm.BalanceQuery{Address: common.HexToAddress(s.c.Address), Block: s.d.Number})
		if s.prev {
			qs = append(qs, evm.BalanceQuery{Address: common.HexToAddress(s.c.Address), Block: s.d.Number - 1})
		}
	}
	res, err := x.rpc.CodeAndImplementationSlot(ctx, qs)
	if err != nil {
		return nil, err
	}
	var out []*eventsv1.Contract
	k := 0
	for _, s := range cs {
		r := res[k]
		k++
		earlier := true
		if s.prev {
			earlier = evm.IsContractCode(res[k].Code)
			k++
		}
		if s.tx != nil {
			s.tx.BytecodeSize = uint32(len(r.Code))
		}
		isContract := evm.IsContractCode(r.Code)
		if _, read := x.round.answers[s.c.Address]; !read { // loadCode's answer is the later one
			x.round.answers[s.c.Address] = codeAnswer{contract: isContract, atMs: s.d.TimeMs}
		}
		if !isContract {
			continue // a failed creation, an address without code or an EIP-7702 delegated EOA
		}
		c := s.c
		c.BlockNumber, c.BlockHash, c.BlockTimeMs = s.d.Number, s.d.Hash, s.d.TimeMs
		c.Bytecode = hexutil.Encode(r.Code)
		c.FunctionSighashes = evm.FunctionSighashes(r.Code)
		c.ProxyImplementation = evm.ImplementationFromSlot(r.Slot)
		if c.ProxyImplementation == "" {
			c.ProxyImplementation = evm.MinimalProxyTarget(r.Code)
		}
		if !earlier {
			internalCreation(c, s.d)
		}
		out = append(out, c)
	}
	return out, nil
}

// internalCreation fills the creation of a contract created inside a call of block d: the
// transaction of its first transfer.
func internalCreation(c *eventsv1.Contract, d *evm.Decoded) {
	var hash string
	for _, t := range d.Transfers {
		if t.TokenAddress == c.Address {
			hash = t.TransactionHash
			break
		}
	}
	for _, t := range d.Transactions {
		if t.Hash == hash {
			c.Deployer, c.DeployTxHash, c.InternalDeployer = t.From, t.Hash, t.To
			return
		}
	}
}

// balanceWant is one balance to read: a (holder, token) pair at one of the round's blocks.
type balanceWant struct {
	block int
	pair  evm.Touch
}

// readBalances reads, for every block, the balance of each pair it touched at that block;
// pairs to re-read after a reorg are read at the last block. Reads the node refuses (a
// reverting balanceOf, state it no longer keeps) are skipped and logged.
func (x *Indexer) readBalances(ctx context.Context, blocks []*evm.Decoded, reread []store.Pair) ([][]*eventsv1.BalanceObservation, error) {
	wants := balanceWants(blocks, reread)
	values, err := x.readValues(ctx, blocks, wants)
	if err != nil {
		return nil, err
	}
	out := make([][]*eventsv1.BalanceObservation, len(blocks))
	for i, w := range wants {
		if values[i] == "" {
			continue
		}
		out[w.block] = append(out[w.block], x.observation(blocks[w.block], w.pair, values[i]))
	}
	return out, nil
}

// balanceWants lists every pair each block touched, then the pairs to re-read (at the last
// block) that the last block did not touch.
func balanceWants(blocks []*evm.Decoded, reread []store.Pair) []balanceWant {
	var wants []balanceWant
	for i, d := range blocks {
		for _, t := range d.Touched {
			wants = append(wants, balanceWant{i, t})
		}
	}
	lastTouched := map[evm.Touch]bool{}
	for _, t := range blocks[len(blocks)-1].Touched {
		lastTouched[t] = true
	}
	for _, p := range reread {
		t := evm.Touch{Address: p.Address, Token: p.Token}
		if !lastTouched[t] {
			lastTouched[t] = true
			wants = append(wants, balanceWant{len(blocks) - 1, t})
		}
	}
	return wants
}

// readValues reads the wanted balances, native and token ones in one batch each; a refused read
// leaves its value empty.
func (x *Indexer) readValues(ctx context.Context, blocks []*evm.Decoded, wants []balanceWant) ([]string, error) {
	var nq []evm.BalanceQuery
	var tq []evm.TokenBalanceQuery
	var nIdx, tIdx []int
	for i, w := range wants {
		n := blocks[w.block].Number
		if w.pair.Token == "" {
			nq = append(nq, evm.BalanceQuery{Address: common.HexToAddress(w.pair.Address), Block: n})
			nIdx = append(nIdx, i)
		} else {
			tq = append(tq, evm.TokenBalanceQuery{Holder: common.HexToAddress(w.pair.Address), Token: common.HexToAddress(w.pair.Token), Block: n})
			tIdx = append(tIdx, i)
		}
	}
	values := make([]string, len(wants))
	failed := 0
	var firstErr error
	if len(nq) > 0 {
		res, err := x.rpc.Balances(ctx, nq)
		if err != nil {
			return nil, err
		}
		for k, r := range res {
			if r.Err != nil {
				failed++
				firstErr = cmp(firstErr, r.Err)
				continue
			}
			values[nIdx[k]] = r.Value.ToInt().String()
		}
	}
	if len(tq) > 0 {
		res, err := x.rpc.TokenBalances(ctx, tq)
		if err != nil {
			return nil, err
		}
		for k, r := range res {
			if r.Err != nil {
				failed++
				firstErr = cmp(firstErr, r.Err)
				continue
			}
			values[tIdx[k]] = r.Value.Dec()
		}
	}
	if failed > 0 {
		x.log.Warn("balance reads refused by the node were skipped", "count", failed, "first_error", firstErr,
			"from", blocks[0].Number, "to", blocks[len(blocks)-1].Number)
	}
	return values, nil
}

// observation is the balance event of pair at block d.
func (x *Indexer) observation(d *evm.Decoded, pair evm.Touch, value string) *eventsv1.BalanceObservation {
	c := x.cfg.Chain
	o := &eventsv1.BalanceObservation{Chain: c.Name, Address: pair.Address, TokenAddress: pair.Token, BlockNumber: d.Number,
		BlockTimeMs: d.TimeMs, Balance: value, BlockHash: d.Hash}
	if pair.Token == "" {
		o.TokenName, o.TokenSymbol, o.TokenDecimals = c.NativeName, c.NativeSymbol, c.NativeDecimals
		o.TokenId = x.mk.PricingID(c.Name, "")
		if o.TokenId == "" {
			o.TokenId = c.NativePricingID
		}
	} else {
		tk, _ := x.token(pair.Token)
		o.TokenName, o.TokenSymbol, o.TokenDecimals = tk.Name, tk.Symbol, tk.Decimals
		o.TokenId = x.mk.PricingID(c.Name, pair.Token)
	}
	return o
}

func cmp(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// String describes the indexer.
func (x *Indexer) String() string {
	return "EVM indexer for " + x.cfg.Chain.Name + " (confirmations " + strconv.FormatUint(x.cfg.Confirmations, 10) + ")"
}
