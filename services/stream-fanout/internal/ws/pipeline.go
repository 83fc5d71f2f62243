package ws

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/feed"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/orphans"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
	"github.com/segmentio/kafka-go"
	"google.golang.org/protobuf/proto"
)

// Pipeline runs a replica's reading and matching: the attribution read model loaded whole and
// kept current, the reorg topic read whole into the orphaned blocks and followed, the transfer
// topic followed from its end, the engine, and checkpoints. Stop
// ends it in the order that loses nothing: the transfer feed first, then what it handed the
// engine is matched, then every connection is saved and closed, then the engine stops.
type Pipeline struct {
	Engine       *engine.Engine
	Hub          *Hub
	Transfers    feed.Topic
	Attributions feed.Topic
	// Reorgs is chain.reorgs.v1, read whole into Orphans (nil: not read), as the engine's and
	// resumes' record of the orphaned blocks.
	Reorgs  feed.Topic
	Orphans *orphans.Set
	Log     *slog.Logger
	// Ready is called once the read model is loaded and the feed started.
	Ready func()

	mu         sync.Mutex
	stopFeed   context.CancelFunc
	feedDone   chan struct{}
	stopEngine context.CancelFunc
	engineDone chan struct{}
}

// Run loads the read model and the orphaned blocks, then follows the transfer topic until ctx
// ends or Stop.
func (p *Pipeline) Run(ctx context.Context) error {
	ectx, stopEngine := context.WithCancel(context.WithoutCancel(ctx))
	engineDone := make(chan struct{})
	go func() { defer close(engineDone); _ = p.Engine.Run(ectx) }()
	fctx, stopFeed := context.WithCancel(ctx)
	p.mu.Lock()
	p.stopFeed, p.feedDone, p.stopEngine, p.engineDone = stopFeed, make(chan struct{}), stopEngine, engineDone
	feedDone := p.feedDone
	p.mu.Unlock()
	defer close(feedDone)

	attrStart, err := p.Attributions.Offsets(fctx, false)
	if err != nil {
		return err
	}
	attrEnd, err := p.Attributions.Offsets(fctx, true)
	if err != nil {
		return err
	}
	loaded := make(chan struct{})
	errs := make(chan error, 4)
	go func() { errs <- p.followAttributions(fctx, attrStart, attrEnd, loaded) }()
	reorgs := make(chan struct{})
	if p.Orphans != nil {
		go func() {
			errs <- p.Orphans.Follow(fctx, p.Reorgs, p.Transfers, p.Log, func() { close(reorgs) })
		}()
	} else {
		close(reorgs)
	}
	// Neither a transfer nor a resume is served before the reorgs published so far are known:
	// a replica started after a reorg would otherwise replay its orphaned transfers.
	for _, ch := range []chan struct{}{loaded, reorgs} {
		select {
		case <-ch:
		case err := <-errs:
			return err
		case <-fctx.Done():
			return nil
		}
	}
	// From here a filter naming an entity or type the read model lacks is refused.
	p.Engine.Do(fctx, p.Engine.SetLoaded)
	start, err := p.Transfers.Offsets(fctx, true)
	if err != nil {
		return err
	}
	p.Engine.Do(fctx, func() { p.Engine.SetPositions(start) })
	go func() {
		errs <- p.Transfers.Follow(fctx, start, func(m kafka.Message) {
			p.Hub.o.Metrics.position(m)
			fetched := time.Now()
			r, ok := decodeTransfer(m, p.Log)
			if !ok {
				// A skipped record still moves the partition on.
				r = engine.Record{Part: m.Partition, Off: m.Offset, Time: m.Time, Msg: &eventsv1.Transfer{}}
			}
			r.Fetched = fetched
			p.settleOrphans(fctx, &r)
			select {
			case p.Engine.Records() <- r:
			case <-fctx.Done():
			}
		}, func(g feed.Gap) { p.feedGap(fctx, g) })
	}()
	waitCheckpoints := p.startCheckpoints(fctx, errs)
	defer func() { stopFeed(); waitCheckpoints() }()
	if p.Ready != nil {
		p.Ready()
	}
	select {
	case <-fctx.Done():
		return nil
	case err := <-errs:
		if fctx.Err() != nil {
			return nil
		}
		return err
	}
}

// startCheckpoints runs the hub's checkpoints until ctx ends; wait returns once they have
// stopped. Run waits for them before it returns, and Stop goes on to save every connection: a
// checkpoint's save racing the shutdown's is settled by the connection's save turns either way,
// but none is left running against connections already closed.
func (p *Pipeline) startCheckpoints(ctx context.Context, errs chan<- error) (wait func()) {
	done := make(chan struct{})
	go func() { defer close(done); errs <- p.Hub.RunCheckpoints(ctx) }()
	return func() { <-done }
}

// settleOrphans has the reorgs written before r applied when r is of a block marked orphaned
// (orphans.Set.Settle), before r is handed to the engine: the wait, bounded, holds back r's
// partition only, in order, and the engine then decides on r without waiting. A Reorg naming
// the block canonical again, which ingest publishes before the block's transfers, may not have
// been read yet: the reorg topic is read side by side.
func (p *Pipeline) settleOrphans(ctx context.Context, r *engine.Record) {
	if p.Orphans != nil && r.Msg != nil && p.Orphans.Orphaned(r.Msg.GetChain(), r.Msg.GetBlockHash()) {
		p.Orphans.Settle(ctx, map[int]int64{r.Part: r.Off + 1})
	}
}

// followAttributions applies intel.attributions.v1 from its start; loaded closes once every
// partition has reached where it ended when the replica started.
func (p *Pipeline) followAttributions(ctx context.Context, start, end map[int]int64, loaded chan struct{}) error {
	ld := feed.NewLoaded(start, end, func() { close(loaded) })
	return p.Attributions.Follow(ctx, start, func(m kafka.Message) {
		k, a, ok := decodeAttribution(m)
		if ok {
			p.Engine.Do(ctx, func() { p.Engine.SetAttr(k, a) })
		}
		ld.Record(m.Partition, m.Offset)
	}, ld.Gap)
}

// feedGap is what the transfer feed could not read: counted and logged; a reset is handed to
// the engine in line with the records, so it applies after the old log's and before the new
// log's, and the hub's shared reads of the topic's end and start, which may be the old log's,
// are dropped.
func (p *Pipeline) feedGap(ctx context.Context, g feed.Gap) {
	p.Hub.o.Metrics.feedGap(g.Reset)
	if !g.Reset {
		p.Log.Error("the transfer topic's retention deleted records before this replica read them; connected sessions miss the transfers among them",
			"partition", g.Partition, "from", g.From, "to", g.To)
		return
	}
	p.Hub.ends.drop()
	p.Hub.starts.drop()
	if p.Orphans != nil {
		p.Orphans.TransfersReset(g.Partition)
	}
	select {
	case p.Engine.Records() <- engine.Record{Part: g.Partition, Off: g.To, Reset: true}:
	case <-ctx.Done():
	}
}

func decodeAttribution(m kafka.Message) (engine.AttrKey, *render.Attr, bool) {
	ct, addr, ok := eventsv1.SplitAttributionKey(string(m.Key))
	if m.Value == nil {
		if !ok {
			return engine.AttrKey{}, nil, false
		}
		return engine.AttrKey{ChainType: ct, Address: render.NormalizeAddress(ct, addr)}, nil, true
	}
	a := &eventsv1.Attribution{}
	if err := proto.Unmarshal(m.Value, a); err != nil || a.GetChainType() == "" || a.GetAddress() == "" {
		return engine.AttrKey{}, nil, false
	}
	ct = a.GetChainType()
	return engine.AttrKey{ChainType: ct, Address: render.NormalizeAddress(ct, a.GetAddress())}, render.AttrFrom(a), true
}

// Stop stops the feed, matches what it had handed over, saves and closes every connection
// (1001), and stops the engine.
func (p *Pipeline) Stop(ctx context.Context) error {
	p.mu.Lock()
	stopFeed, feedDone, stopEngine, engineDone := p.stopFeed, p.feedDone, p.stopEngine, p.engineDone
	p.mu.Unlock()
	if stopFeed == nil {
		return nil
	}
	stopFeed()
	select {
	case <-feedDone:
	case <-ctx.Done():
		return fmt.Errorf("transfer feed did not stop: %w", ctx.Err())
	}
	p.Engine.Do(ctx, p.Engine.Drain)
	p.Hub.Shutdown(ctx)
	stopEngine()
	<-engineDone
	return nil
}
