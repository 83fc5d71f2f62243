// Package chaintest holds test helpers shared by ingest's integration tests: a consumer of
// every chain topic that applies the reorg semantics consumers must implement.
package chaintest

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"google.golang.org/protobuf/proto"
)

// Quiet is a logger that drops everything.
var Quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Topics are the topics ingest publishes and reads.
var Topics = []string{eventsv1.TopicTransactions, eventsv1.TopicTransfers, eventsv1.TopicSwaps, eventsv1.TopicBalances,
	eventsv1.TopicReorgs, eventsv1.TopicBlocks, eventsv1.TopicTokens, eventsv1.TopicContracts, eventsv1.TopicMarketTokens, eventsv1.TopicPrices}

// Sink is a consumer of every chain topic applying the reorg semantics of docs/ingest.md: rows
// are upserted by id; a reorg deletes the rows of its orphaned block hashes and rows of those
// hashes arriving later are set aside; a reorg naming such a block canonical again takes it back
// with the rows set aside; a balance observation replaces an older-or-equal block's.
type Sink struct {
	Mu         sync.Mutex
	Transfers  map[string]*eventsv1.Transfer
	Txs        map[string]*eventsv1.Transaction
	Swaps      map[string]*eventsv1.Swap
	Balances   map[string]*eventsv1.BalanceObservation
	Tokens     map[string]*eventsv1.Token
	Contracts  map[string]*eventsv1.Contract // by "<chain>:<address>"
	Orphaned   map[string]bool
	Parked     map[string][]func() // block hash → rows of it that arrived while it was orphaned
	Reorgs     []*eventsv1.Reorg
	Deliveries int // transfer records delivered, duplicates included
}

// StartSink consumes every chain topic until the test ends.
func StartSink(t testing.TB, brokers []string) *Sink {
	s := &Sink{Transfers: map[string]*eventsv1.Transfer{}, Txs: map[string]*eventsv1.Transaction{}, Swaps: map[string]*eventsv1.Swap{},
		Balances: map[string]*eventsv1.BalanceObservation{}, Tokens: map[string]*eventsv1.Token{}, Contracts: map[string]*eventsv1.Contract{}, Orphaned: map[string]bool{},
		Parked: map[string][]func(){}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	run := func(r interface{ Run(context.Context) error }) {
		wg.Add(1)
		go func() { defer wg.Done(); _ = r.Run(ctx) }()
	}
	for _, c := range s.consumers(brokers) {
		run(c)
	}
	return s
}

// consumers are the sink's consumer of each chain topic.
func (s *Sink) consumers(brokers []string) []interface{ Run(context.Context) error } {
	opts := func(topic string) eventbus.ConsumerOptions {
		return eventbus.ConsumerOptions{Brokers: brokers, Group: "sink." + topic, Topic: topic, Logger: Quiet, MaxWait: 20 * time.Millisecond}
	}
	return []interface{ Run(context.Context) error }{
		sinkConsumer(s, opts(eventsv1.TopicTransfers), func(m *eventsv1.Transfer) {
			s.Deliveries++
			s.apply(m.BlockHash, func() { s.Transfers[m.Chain+":"+m.Id] = m })
		}),
		sinkConsumer(s, opts(eventsv1.TopicTransactions), func(m *eventsv1.Transaction) {
			s.apply(m.BlockHash, func() { s.Txs[m.Chain+":"+m.Hash] = m })
		}),
		sinkConsumer(s, opts(eventsv1.TopicSwaps), func(m *eventsv1.Swap) {
			s.apply(m.BlockHash, func() { s.Swaps[m.Chain+":"+m.Id] = m })
		}),
		sinkConsumer(s, opts(eventsv1.TopicBalances), func(m *eventsv1.BalanceObservation) {
			k := m.Chain + "|" + m.Address + "|" + m.TokenAddress
			s.apply(m.BlockHash, func() {
				if old := s.Balances[k]; old == nil || old.BlockNumber <= m.BlockNumber {
					s.Balances[k] = m
				}
			})
		}),
		sinkConsumer(s, opts(eventsv1.TopicTokens), func(m *eventsv1.Token) { s.Tokens[m.Chain+":"+m.Address] = m }),
		sinkConsumer(s, opts(eventsv1.TopicContracts), func(m *eventsv1.Contract) {
			s.apply(m.BlockHash, func() { s.Contracts[m.Chain+":"+m.Address] = m })
		}),
		sinkConsumer(s, opts(eventsv1.TopicReorgs), s.reorg),
	}
}

// sinkConsumer is a consumer of o's topic that hands each message of a batch, in order, to each,
// holding the sink's Mu for the batch.
func sinkConsumer[M interface {
	proto.Message
	*T
}, T any](s *Sink, o eventbus.ConsumerOptions, each func(M)) *eventbus.Consumer[M] {
	return eventbus.NewConsumer(o, func() M { return M(new(T)) }, func(_ context.Context, b []eventbus.Message[M]) error {
		s.Mu.Lock()
		defer s.Mu.Unlock()
		for _, m := range b {
			each(m.Msg)
		}
		return nil
	})
}

// reorg records a reorg: blocks it makes canonical again get their parked rows back, and the rows
// of the blocks it orphans are dropped. The caller holds Mu.
func (s *Sink) reorg(r *eventsv1.Reorg) {
	s.Reorgs = append(s.Reorgs, r)
	for _, c := range r.Canonical {
		if s.Orphaned[c.Hash] {
			delete(s.Orphaned, c.Hash)
			for _, f := range s.Parked[c.Hash] {
				f()
			}
			delete(s.Parked, c.Hash)
		}
	}
	for _, o := range r.Orphaned {
		s.Orphaned[o.Hash] = true
	}
	for k, v := range s.Transfers {
		if s.Orphaned[v.BlockHash] {
			delete(s.Transfers, k)
		}
	}
	for k, v := range s.Txs {
		if s.Orphaned[v.BlockHash] {
			delete(s.Txs, k)
		}
	}
	for k, v := range s.Swaps {
		if s.Orphaned[v.BlockHash] {
			delete(s.Swaps, k)
		}
	}
	for k, v := range s.Balances {
		if s.Orphaned[v.BlockHash] {
			delete(s.Balances, k)
		}
	}
}

// apply applies a row of block now, or sets it aside while the block is orphaned. Callers hold Mu.
func (s *Sink) apply(block string, f func()) {
	if s.Orphaned[block] {
		s.Parked[block] = append(s.Parked[block], f)
		return
	}
	f()
}

// Eventually polls check until it returns nil or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v", timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
