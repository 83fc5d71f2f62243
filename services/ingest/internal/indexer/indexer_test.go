package indexer_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/ingest/internal/evm"
	"github.com/chainintel/chainintel/services/ingest/internal/indexer"
	"github.com/chainintel/chainintel/services/ingest/internal/market"
	"github.com/chainintel/chainintel/services/ingest/internal/rpctest"
	"github.com/chainintel/chainintel/services/ingest/internal/store"
	"github.com/ethereum/go-ethereum/common"
)

type rig struct {
	chain  chains.Chain
	client *evm.Client
	st     *store.Store
	mk     *market.Model
	pub    *eventbus.Publisher
	sink   *sink
	srv    *rpctest.Server
}

func newRig(t *testing.T, chainName string, h rpctest.Handler) *rig {
	t.Helper()
	brokers := kafkatest.Broker(t, chainTopics...)
	c, _ := chains.Lookup(chainName)
	r := &rig{chain: c, st: store.New(pgtest.Pool(t)), mk: market.New(), sink: startSink(t, brokers)}
	r.srv = rpctest.Start(t, h)
	var err error
	r.client, err = evm.Dial(context.Background(), r.srv.URL, evm.ClientOptions{MaxBatch: 7, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.client.Close)
	r.pub = eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	t.Cleanup(func() { _ = r.pub.Close() })
	r.mk.SetToken(chainName, evm.Addr(tokenAddr), "test-token")
	r.mk.AddPrice("test-token", time.Unix(1_699_990_000, 0), 2)
	r.mk.AddPrice(c.NativePricingID, time.Unix(1_699_990_000, 0), 2000)
	return r
}

func (r *rig) indexer(pub indexer.Publisher, start uint64) *indexer.Indexer {
	return indexer.New(indexer.Config{Chain: r.chain, StartBlock: &start, BatchBlocks: 3, ReorgWindow: 64, Balances: true,
		ContractFlags: true, PollInterval: 10 * time.Millisecond}, r.client, r.st, r.mk, pub, quiet)
}

// drain steps until the indexer reaches the head, tolerating (and counting) failed rounds.
func drain(t *testing.T, x *indexer.Indexer) (failures int) {
	t.Helper()
	for i := 0; i < 200; i++ {
		progressed, err := x.Step(context.Background())
		if err != nil {
			if !errors.Is(err, errCrash) {
				t.Fatal(err)
			}
			failures++
			continue
		}
		if !progressed {
			return failures
		}
	}
	t.Fatal("indexer did not reach the head in 200 rounds")
	return failures
}

type want struct {
	transfers map[string]string // id → "from>to token amount blockHash"
	txs       map[string]bool   // hash → success
	balances  map[string]string // address|token → balance
}

// expect derives, from the scripted chain alone, what consumers must hold after ingesting
// blocks 1..head of bs; extra blocks' touched accounts are read at the end too.
func expect(bs []*mblock, head uint64, extra []*mblock) want {
	w := want{transfers: map[string]string{}, txs: map[string]bool{}, balances: map[string]string{}}
	touched := map[string]bool{}
	touch := func(blocks []*mblock) {
		for _, b := range blocks {
			if len(b.txs) > 0 {
				touched[evm.Addr(miner)+"|"] = true
			}
			for _, tx := range b.txs {
				touched[evm.Addr(tx.from)+"|"] = true
				if tx.fail {
					continue
				}
				if tx.token {
					touched[evm.Addr(tx.from)+"|"+evm.Addr(tokenAddr)] = true
					touched[evm.Addr(tx.to)+"|"+evm.Addr(tokenAddr)] = true
				} else if tx.value.Sign() > 0 {
					touched[evm.Addr(tx.to)+"|"] = true
				}
			}
		}
	}
	touch(bs[1 : head+1])
	touch(extra)
	for _, b := range bs[1 : head+1] {
		logIdx := 0
		bh := evm.HashHex(b.hash)
		for _, tx := range b.txs {
			h := evm.HashHex(tx.hash)
			w.txs[h] = !tx.fail
			switch {
			case tx.fail:
			case tx.token:
				w.transfers[h+"_"+strconv.Itoa(logIdx)] = fmt.Sprintf("%s>%s %s %s %s", evm.Addr(tx.from), evm.Addr(tx.to), evm.Addr(tokenAddr), tx.amount, bh)
				logIdx++
			case tx.value.Sign() > 0:
				w.transfers[h+"_ext"] = fmt.Sprintf("%s>%s %s %s %s", evm.Addr(tx.from), evm.Addr(tx.to), "", tx.value, bh)
			}
		}
	}
	last := bs[head]
	for k := range touched {
		addr, tok, _ := strings.Cut(k, "|")
		m := last.native
		if tok != "" {
			m = last.tokens
		}
		v := m[common.HexToAddress(addr)]
		if v == nil {
			v = new(big.Int)
		}
		w.balances[k] = v.String()
	}
	return w
}

func check(s *sink, chain string, w want) error {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if len(s.Transfers) != len(w.transfers) {
		return fmt.Errorf("%d transfers consumed, want %d", len(s.Transfers), len(w.transfers))
	}
	for id, desc := range w.transfers {
		tr := s.Transfers[chain+":"+id]
		if tr == nil {
			return fmt.Errorf("transfer %s missing", id)
		}
		if got := fmt.Sprintf("%s>%s %s %s %s", tr.From, tr.To, tr.TokenAddress, tr.Amount, tr.BlockHash); got != desc {
			return fmt.Errorf("transfer %s: %s, want %s", id, got, desc)
		}
	}
	if len(s.Txs) != len(w.txs) {
		return fmt.Errorf("%d transactions consumed, want %d", len(s.Txs), len(w.txs))
	}
	for h, ok := range w.txs {
		tx := s.Txs[chain+":"+h]
		if tx == nil || tx.Success != ok {
			return fmt.Errorf("transaction %s: %v, want success=%v", h, tx, ok)
		}
	}
	if len(s.Balances) != len(w.balances) {
		return fmt.Errorf("%d balances consumed, want %d", len(s.Balances), len(w.balances))
	}
	for k, v := range w.balances {
		o := s.Balances[chain+"|"+k]
		if o == nil || o.Balance != v {
			return fmt.Errorf("balance %s: %v, want %s", k, o, v)
		}
	}
	return nil
}

// follow makes the node serve branch bs up to head, runs the indexer to it and waits until the
// consumer holds exactly that branch (gone: the blocks it must have dropped).
func (r *rig) follow(t *testing.T, x *indexer.Indexer, sc *scriptedChain, bs []*mblock, head uint64, gone []*mblock) {
	t.Helper()
	sc.set(bs, head)
	drain(t, x)
	eventually(t, 20*time.Second, func() error { return check(r.sink, r.chain.Name, expect(bs, head, gone)) })
}

func TestReorgEveryConsumerEndsOnWinningBranch(t *testing.T) {
	a := branch("A", 10, nil, 0)
	b := branch("B", 14, a, 5)
	sc := &scriptedChain{}
	sc.set(a, 10)
	r := newRig(t, "ethereum", sc.handler())
	x := r.indexer(r.pub, 1)
	r.follow(t, x, sc, a, 10, nil)
	r.follow(t, x, sc, b, 14, a[6:]) // the node switches to branch B, which forked after block 5

	r.sink.Mu.Lock()
	defer r.sink.Mu.Unlock()
	if len(r.sink.Reorgs) != 1 {
		t.Fatalf("%d reorg events, want 1", len(r.sink.Reorgs))
	}
	rg := r.sink.Reorgs[0]
	if rg.CommonAncestorNumber != 5 || rg.CommonAncestorHash != evm.HashHex(a[5].hash) || len(rg.Orphaned) != 5 {
		t.Fatalf("reorg %v: want ancestor 5 and blocks 6..10 of branch A orphaned", rg)
	}
	for i, o := range rg.Orphaned {
		if o.Number != uint64(6+i) || o.Hash != evm.HashHex(a[6+i].hash) {
			t.Fatalf("orphaned %d: %v", i, o)
		}
	}
	// Enrichment: token metadata published once, transfers priced at block time.
	tk := r.sink.Tokens["ethereum:"+evm.Addr(tokenAddr)]
	if tk == nil || tk.Name != "Test Token" || tk.Symbol != "TT" || tk.Decimals != 18 || tk.PricingId != "test-token" {
		t.Fatalf("token metadata %v", tk)
	}
	for _, tr := range r.sink.Transfers {
		v, _ := new(big.Float).SetString(tr.Amount)
		f, _ := v.Float64()
		price := 2000.0
		if tr.TokenAddress != "" {
			price = 2
			if tr.TokenSymbol != "TT" || tr.TokenId != "test-token" || tr.TokenDecimals != 18 {
				t.Fatalf("transfer %s lacks token metadata: %v", tr.Id, tr)
			}
		} else if tr.TokenSymbol != "ETH" || tr.TokenId != "ethereum" {
			t.Fatalf("native transfer %s: %v", tr.Id, tr)
		}
		if tr.HistoricalUsd == nil || math.Abs(*tr.HistoricalUsd-f/1e18*price) > 1e-6 {
			t.Fatalf("transfer %s USD %v, want %v", tr.Id, tr.HistoricalUsd, f/1e18*price)
		}
		if tr.TokenAddress != "" && (tr.FromIsContract || tr.ToIsContract) {
			t.Fatalf("EOA flagged as contract in %v", tr)
		}
	}
}

// The chain goes to branch B and back to branch A, extended: the second reorg orphans B's
// blocks, and as ingest reads A's blocks 6..10 again (in rounds of 3), Reorgs name them
// canonical again, so a consumer that set aside rows of A's orphaned blocks takes them back,
// ending on A with every row of it and none of B.
func TestReorgBackToAnOrphanedBranch(t *testing.T) {
	a := branch("A", 10, nil, 0)
	b := branch("B", 12, a, 5)
	a2 := branch("A", 16, nil, 0) // A, grown longer than B
	sc := &scriptedChain{}
	sc.set(a, 10)
	r := newRig(t, "arbitrum_one", sc.handler())
	x := r.indexer(r.pub, 1)
	r.follow(t, x, sc, a, 10, nil)
	r.follow(t, x, sc, b, 12, a[6:])
	r.follow(t, x, sc, a2, 16, b[6:])

	r.sink.Mu.Lock()
	defer r.sink.Mu.Unlock()
	if len(r.sink.Reorgs) < 2 {
		t.Fatalf("%d reorg events, want at least 2", len(r.sink.Reorgs))
	}
	if away := r.sink.Reorgs[1]; away.CommonAncestorNumber != 5 || len(away.Orphaned) != 7 || len(away.Canonical) != 0 {
		t.Fatalf("reorg back to A: %v, want B's blocks 6..12 orphaned and nothing named canonical", away)
	}
	checkCanonicalAgain(t, r.sink.Reorgs[2:], a, 6, 10)
	if a2[6].hash != a[6].hash {
		t.Fatal("A grown longer does not share its blocks with A")
	}
}

// checkCanonicalAgain checks that rgs orphan nothing and name, in order, exactly blocks
// from..to of bs canonical, the first above bs's block from-1.
func checkCanonicalAgain(t *testing.T, rgs []*eventsv1.Reorg, bs []*mblock, from, to int) {
	t.Helper()
	if len(rgs) == 0 || rgs[0].CommonAncestorNumber != uint64(from-1) || rgs[0].CommonAncestorHash != evm.HashHex(bs[from-1].hash) {
		t.Fatalf("reorgs %v: want blocks %d..%d named canonical again above block %d", rgs, from, to, from-1)
	}
	var named []*eventsv1.Reorg_Block
	for _, rg := range rgs {
		if len(rg.Orphaned) != 0 || len(rg.Canonical) == 0 {
			t.Fatalf("reorg %v: want blocks named canonical again and nothing orphaned", rg)
		}
		named = append(named, rg.Canonical...)
	}
	if len(named) != to-from+1 {
		t.Fatalf("%d blocks named canonical again, want %d..%d", len(named), from, to)
	}
	for i, c := range named {
		if c.Number != uint64(from+i) || c.Hash != evm.HashHex(bs[from+i].hash) {
			t.Fatalf("canonical %d: %v, want block %d", i, c, from+i)
		}
	}
}

// The node moves to branch B, the indexer sees the reorg (A's blocks 6..10 orphaned) and
// restarts; the node goes back to A before any block of B was ingested. No reorg is seen (A's
// block 6 extends the cursor's block 5), but the blocks ingest reads again were published as
// orphaned: Reorgs name them canonical again, and the consumer ends with all of A's rows instead
// of keeping them void. Then the same flip once more: the second orphaning of the same hashes is
// undone too.
func TestFlipBackToAnOrphanedBranchBeforeTheNewOneIsIngested(t *testing.T) {
	a := branch("A", 10, nil, 0)
	b := branch("B", 12, a, 5)
	sc := &scriptedChain{}
	sc.set(a, 10)
	r := newRig(t, "arbitrum_one", sc.handler())
	// Its own cursor and block hashes in the package's database, apart from the other tests'.
	r.chain.Name = "arbitrum_one_flip"
	r.mk.SetToken(r.chain.Name, evm.Addr(tokenAddr), "test-token")
	r.follow(t, r.indexer(r.pub, 1), sc, a, 10, nil)
	seen := 0 // reorg events before this flip
	for flip := 1; flip <= 2; flip++ {
		sc.set(b, 12)
		if _, err := r.indexer(r.pub, 1).Step(context.Background()); err != nil { // sees the reorg and rewinds to block 5
			t.Fatal(err)
		}
		// The consumer applies the orphaning before it reads A's blocks again (rows read before
		// it are dropped by it, as on any reorg).
		eventually(t, 20*time.Second, func() error {
			r.sink.Mu.Lock()
			defer r.sink.Mu.Unlock()
			if len(r.sink.Reorgs) != seen+1 {
				return fmt.Errorf("%d reorg events, want %d", len(r.sink.Reorgs), seen+1)
			}
			return nil
		})
		// A new indexer: what was orphaned is known from the store alone.
		r.follow(t, r.indexer(r.pub, 1), sc, a, 10, nil)
		r.sink.Mu.Lock()
		away := r.sink.Reorgs[seen]
		if len(away.Orphaned) != 5 || len(away.Canonical) != 0 {
			r.sink.Mu.Unlock()
			t.Fatalf("flip %d: reorg %v, want A's blocks 6..10 orphaned and nothing named canonical", flip, away)
		}
		checkCanonicalAgain(t, r.sink.Reorgs[seen+1:], a, 6, 10)
		seen = len(r.sink.Reorgs)
		r.sink.Mu.Unlock()
	}
	// Nothing is named canonical twice: the announced hashes are forgotten once committed.
	sc.set(a, 10)
	drain(t, r.indexer(r.pub, 1))
	r.sink.Mu.Lock()
	defer r.sink.Mu.Unlock()
	if len(r.sink.Reorgs) != seen {
		t.Fatalf("%d reorg events, want %d", len(r.sink.Reorgs), seen)
	}
}

// The process dies after Kafka acknowledged a reorg's Reorg and before the cursor moved back.
// The restarted indexer finds committed blocks recorded as orphaned and finishes the rewind,
// whether the node went back to the old branch (its blocks are read again and named canonical
// again) or stayed on the new one: the consumer ends on the node's branch either way.
func TestCrashBetweenReorgAndRewind(t *testing.T) {
	a := branch("A", 10, nil, 0)
	b := branch("B", 12, a, 5)
	for _, back := range []bool{true, false} {
		t.Run(fmt.Sprintf("back=%v", back), func(t *testing.T) {
			sc := &scriptedChain{}
			sc.set(a, 10)
			r := newRig(t, "arbitrum_one", sc.handler())
			r.chain.Name = fmt.Sprintf("arbitrum_one_crash_%v", back) // its own rows in the package's database
			r.mk.SetToken(r.chain.Name, evm.Addr(tokenAddr), "test-token")
			r.follow(t, r.indexer(r.pub, 1), sc, a, 10, nil)
			sc.set(b, 12)
			if _, err := r.indexer(&flakyPublisher{p: r.pub, every: 1}, 1).Step(context.Background()); !errors.Is(err, errCrash) {
				t.Fatalf("reorg round: %v, want the simulated crash", err)
			}
			if cur, _, err := r.st.Cursor(context.Background(), r.chain.Name); err != nil || cur.Number != 10 {
				t.Fatalf("cursor %v %v: want it left at block 10 by the crash", cur, err)
			}
			eventually(t, 20*time.Second, func() error {
				r.sink.Mu.Lock()
				defer r.sink.Mu.Unlock()
				if len(r.sink.Reorgs) != 1 {
					return fmt.Errorf("%d reorg events, want 1", len(r.sink.Reorgs))
				}
				return nil
			})
			if back {
				r.follow(t, r.indexer(r.pub, 1), sc, a, 10, nil)
				r.sink.Mu.Lock()
				defer r.sink.Mu.Unlock()
				if len(r.sink.Reorgs) < 3 || len(r.sink.Reorgs[1].Orphaned) != 5 {
					t.Fatalf("reorgs %v: want A's blocks orphaned again, then named canonical again", r.sink.Reorgs)
				}
				checkCanonicalAgain(t, r.sink.Reorgs[2:], a, 6, 10)
				return
			}
			r.follow(t, r.indexer(r.pub, 1), sc, b, 12, a[6:])
		})
	}
}

// TestRestartAndCrashBetweenPublishAndCommit kills the indexer (a new instance over the same
// store) and makes every third publish "crash" after Kafka acknowledged it: every transfer is
// consumed, none is lost, and the consumer's table has each id once.
func TestRestartAndCrashBetweenPublishAndCommit(t *testing.T) {
	c := branch("C", 30, nil, 0)
	sc := &scriptedChain{}
	sc.set(c, 12)
	r := newRig(t, "base", sc.handler())
	flaky := &flakyPublisher{p: r.pub, every: 3}
	fails := drain(t, r.indexer(flaky, 1))
	// The process dies; the node moves on; a fresh indexer resumes from the stored cursor.
	sc.set(c, 30)
	fails += drain(t, r.indexer(flaky, 1))
	if fails == 0 {
		t.Fatal("no simulated crash happened")
	}
	w := expect(c, 30, nil)
	eventually(t, 20*time.Second, func() error { return check(r.sink, "base", w) })
	cur, ok, err := r.st.Cursor(context.Background(), "base")
	if err != nil || !ok || cur.Number != 30 || cur.Hash != evm.HashHex(c[30].hash) {
		t.Fatalf("cursor %v %v %v", cur, ok, err)
	}
	r.sink.Mu.Lock()
	defer r.sink.Mu.Unlock()
	if r.sink.Deliveries <= len(w.transfers) {
		t.Fatalf("%d deliveries for %d transfers: the crashes should have re-published some", r.sink.Deliveries, len(w.transfers))
	}
	t.Logf("%d distinct transfers consumed from %d deliveries after %d crashes", len(r.sink.Transfers), r.sink.Deliveries, fails)
}

// TestReorgOfPublishedButUncommittedBlocks: the process publishes blocks and dies before its
// commit; meanwhile those blocks are replaced on chain. The restarted indexer finds them among
// the blocks it wrote ahead and orphans them, so consumers end on the new branch.
func TestReorgOfPublishedButUncommittedBlocks(t *testing.T) {
	d := branch("D", 9, nil, 0)
	e := branch("E", 12, d, 3)
	sc := &scriptedChain{}
	sc.set(d, 9)
	r := newRig(t, "optimism", sc.handler())
	// Rounds are 3 blocks: 1..3 commits, 4..6 is published and then "crashes".
	flaky := &flakyPublisher{p: r.pub, every: 2}
	x := r.indexer(flaky, 1)
	if _, err := x.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Step(context.Background()); !errors.Is(err, errCrash) {
		t.Fatalf("second round: %v, want the simulated crash", err)
	}
	sc.set(e, 12)
	drain(t, r.indexer(r.pub, 1))
	eventually(t, 20*time.Second, func() error { return check(r.sink, "optimism", expect(e, 12, d[4:7])) })
	r.sink.Mu.Lock()
	defer r.sink.Mu.Unlock()
	if len(r.sink.Reorgs) != 1 || r.sink.Reorgs[0].CommonAncestorNumber != 3 || len(r.sink.Reorgs[0].Orphaned) != 3 {
		t.Fatalf("reorgs %v: want blocks 4..6 of the first branch orphaned above block 3", r.sink.Reorgs)
	}
}
