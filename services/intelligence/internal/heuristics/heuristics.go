// Package heuristics infers attributions from transfer activity (docs/intelligence.md):
// exchange deposit addresses (an unattributed address whose outgoing transfers go to an
// exchange's hot wallets and that receives from other addresses), clusters (the deposit address
// with the addresses that pay into it: one exchange customer), and the predicted entity of each
// deposit address. Each pass recomputes the complete set of conclusions from the stored inputs,
// so a pass is idempotent and a relabel of a hot wallet is followed at the next pass.
package heuristics

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/lifecycle"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// Params tune the heuristics.
type Params struct {
	// ExchangeTypes are the entity types whose addresses count as exchange hot wallets.
	ExchangeTypes []string
	// MinSenders is how many distinct addresses must have paid into a deposit address.
	MinSenders int
	// MinSweepShare is the least share of an address's distinct recipients that must be hot
	// wallets of one exchange.
	MinSweepShare float64
	// EdgeRetention drops transfer pairs last seen longer ago than this (relative to the newest
	// transfer of their chain); 0 keeps them all.
	EdgeRetention time.Duration
}

// DefaultParams are the documented defaults.
func DefaultParams() Params {
	return Params{ExchangeTypes: []string{"cex"}, MinSenders: 1, MinSweepShare: 0.8}
}

// Store is the store as the heuristics use it.
type Store interface {
	SweepCandidates(ctx context.Context, exchangeTypes []string) ([]store.SweepCandidate, error)
	SendersOf(ctx context.Context, chainsOf, addrs []string) ([]store.Sender, error)
	SetHeuristicResults(ctx context.Context, results []store.HeuristicResult) (int, error)
	PruneEdges(ctx context.Context, retentionMs int64) (int64, error)
}

// Locker gives passes their turns across every replica: one pass at a time (the store's
// heuristics lock), and one per interval (the last pass's start, recorded under the lock).
type Locker interface {
	// TryHeuristicsPass claims a pass for runner unless another session is making one or
	// another runner's pass started less than every ago; finish(completed) ends the claim,
	// keeping its record only when the pass completed.
	TryHeuristicsPass(ctx context.Context, runner string, every time.Duration) (finish func(completed bool), ok bool, err error)
}

// Deposit is a detected deposit address.
type Deposit struct {
	ChainType, Address string
	Exchange           string
	chainsSeen         []string
}

// DetectDeposits applies the deposit rule to sweep candidates: an address is a deposit address
// of exchange E when at least MinSweepShare of the distinct addresses it sent to are hot wallets
// of E and at least MinSenders distinct addresses paid into it. An address sweeping to two
// exchanges is left out, and so is one detected for different exchanges on two chains of its
// type.
func DetectDeposits(cands []store.SweepCandidate, p Params) []Deposit {
	type key struct{ chain, addr string }
	best := map[key]store.SweepCandidate{}
	ambiguous := map[key]bool{}
	for _, c := range cands {
		k := key{c.Chain, c.Address}
		b, ok := best[k]
		switch {
		case !ok || c.HotOut > b.HotOut:
			best[k] = c
			delete(ambiguous, k)
		case c.HotOut == b.HotOut && c.Exchange != b.Exchange:
			ambiguous[k] = true
		}
	}
	byAddr := map[string]*Deposit{}
	conflict := map[string]bool{}
	for k, c := range best {
		if ambiguous[k] || c.Senders < p.MinSenders || c.OutDegree == 0 || notWallet(c.ChainType, c.Address) {
			continue
		}
		if float64(c.HotOut)/float64(c.OutDegree) < p.MinSweepShare {
			continue
		}
		ak := attribution.Key(c.ChainType, c.Address)
		d, ok := byAddr[ak]
		if !ok {
			byAddr[ak] = &Deposit{ChainType: c.ChainType, Address: c.Address, Exchange: c.Exchange, chainsSeen: []string{c.Chain}}
			continue
		}
		if d.Exchange != c.Exchange {
			conflict[ak] = true
		}
		d.chainsSeen = append(d.chainsSeen, c.Chain)
	}
	out := make([]Deposit, 0, len(byAddr))
	for k, d := range byAddr {
		if !conflict[k] {
			sort.Strings(d.chainsSeen)
			out = append(out, *d)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return attribution.Key(out[i].ChainType, out[i].Address) < attribution.Key(out[j].ChainType, out[j].Address)
	})
	return out
}

// Clusters groups each deposit address with the unattributed addresses that paid into it,
// merging groups that share an address (a customer paying into two deposit addresses). Groups
// of two or more get the id "cl-" + 16 hex digits of the SHA-256 of their smallest member key,
// which stays put while the group only grows. It returns cluster ids by attribution key.
func Clusters(deposits []Deposit, senders []store.Sender) map[string]string {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		p, ok := parent[x]
		if !ok {
			parent[x] = x
			return x
		}
		if p == x {
			return x
		}
		r := find(p)
		parent[x] = r
		return r
	}
	union := func(a, b string) {
		ra, rb := find(a), find(b)
		if ra == rb {
			return
		}
		if ra < rb {
			parent[rb] = ra
		} else {
			parent[ra] = rb
		}
	}
	isDeposit := map[string]bool{}
	for _, d := range deposits {
		k := attribution.Key(d.ChainType, d.Address)
		isDeposit[k] = true
		find(k)
	}
	for _, s := range senders {
		sk, dk := attribution.Key(s.ChainType, s.Sender), attribution.Key(s.ChainType, s.Deposit)
		if s.Attributed || isDeposit[sk] || !isDeposit[dk] || notWallet(s.ChainType, s.Sender) {
			continue
		}
		union(sk, dk)
	}
	members := map[string][]string{}
	for k := range parent {
		r := find(k)
		members[r] = append(members[r], k)
	}
	out := map[string]string{}
	for root, ms := range members {
		if len(ms) < 2 {
			continue
		}
		// With union by smaller key the root is the smallest member.
		sum := sha256.Sum256([]byte(root))
		id := "cl-" + hex.EncodeToString(sum[:8])
		for _, m := range ms {
			out[m] = id
		}
	}
	return out
}

// notWallet reports the zero and burn addresses (address.NotWallet), which the store already
// leaves out of candidates and senders: every mint comes from the zero address, so as a sender
// it would join every deposit address that received a minted token into one cluster.
func notWallet(chainType, addr string) bool {
	_, ok := address.NotWallet(chains.Type(chainType), addr)
	return ok
}

// Summary is what a pass concluded.
type Summary struct {
	Candidates int
	Deposits   []Deposit
	Clustered  int // addresses in a cluster
	Clusters   int
	Changed    int // attributions that changed (and were re-versioned)
	Pruned     int64
}

// Run makes one pass: detect deposit addresses, cluster, and store the complete set of
// conclusions.
func Run(ctx context.Context, st Store, p Params) (Summary, error) {
	var sum Summary
	if p.EdgeRetention > 0 {
		n, err := st.PruneEdges(ctx, p.EdgeRetention.Milliseconds())
		if err != nil {
			return sum, err
		}
		sum.Pruned = n
	}
	cands, err := st.SweepCandidates(ctx, p.ExchangeTypes)
	if err != nil {
		return sum, err
	}
	sum.Candidates = len(cands)
	deps := DetectDeposits(cands, p)
	sum.Deposits = deps
	var chs, addrs []string
	for _, d := range deps {
		for _, c := range d.chainsSeen {
			chs, addrs = append(chs, c), append(addrs, d.Address)
		}
	}
	var senders []store.Sender
	if len(chs) > 0 {
		if senders, err = st.SendersOf(ctx, chs, addrs); err != nil {
			return sum, err
		}
	}
	clusters := Clusters(deps, senders)
	ids := map[string]bool{}
	results := make([]store.HeuristicResult, 0, len(deps)+len(clusters))
	inResults := map[string]bool{}
	for _, d := range deps {
		k := attribution.Key(d.ChainType, d.Address)
		results = append(results, store.HeuristicResult{ChainType: d.ChainType, Address: d.Address, PredictedEntity: d.Exchange,
			DepositServiceID: d.Exchange, ClusterID: clusters[k]})
		inResults[k] = true
	}
	keys := make([]string, 0, len(clusters))
	for k := range clusters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ids[clusters[k]] = true
		if inResults[k] {
			continue
		}
		ct, a := splitKey(k)
		results = append(results, store.HeuristicResult{ChainType: ct, Address: a, ClusterID: clusters[k]})
	}
	sum.Clustered, sum.Clusters = len(clusters), len(ids)
	n, err := st.SetHeuristicResults(ctx, results)
	if err != nil {
		return sum, err
	}
	sum.Changed = n
	return sum, nil
}

func splitKey(k string) (string, string) {
	for i := 0; i < len(k); i++ {
		if k[i] == ':' {
			return k[:i], k[i+1:]
		}
	}
	return "", k
}

// RunExclusive makes a pass as runner unless another session (another replica, or
// `intelligence heuristics`) is making one or another runner's pass started less than every
// ago (0: whenever none is being made); ran is false when it skipped. Every pass computes the
// same conclusions from the same inputs, holding the version lock the consumers' attribution
// writes wait for, so one per interval across the replicas is enough.
func RunExclusive(ctx context.Context, st Store, lk Locker, p Params, runner string, every time.Duration) (sum Summary, ran bool, err error) {
	finish, ok, err := lk.TryHeuristicsPass(ctx, runner, every)
	if err != nil || !ok {
		return sum, false, err
	}
	defer func() { finish(err == nil) }()
	sum, err = Run(ctx, st, p)
	return sum, true, err
}

// Runner names this process as the maker of heuristics passes (host name and a random suffix,
// so two processes on one host differ).
func Runner() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + "/" + hex.EncodeToString(b[:])
}

// Loop offers a pass every interval until ctx ends, as runner: the runner that made the last
// pass makes the next at its next round, the others skip theirs unless the last pass is an
// interval old (its runner stopped or fell behind); a round finding a pass being made skips
// too. Failures are logged and retried.
func Loop(ctx context.Context, st Store, lk Locker, p Params, runner string, interval time.Duration, log *slog.Logger) error {
	return lifecycle.Every(ctx, interval, func(ctx context.Context) {
		sum, ran, err := RunExclusive(ctx, st, lk, p, runner, interval)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				log.Warn("heuristics pass failed", "error", fmt.Errorf("heuristics: %w", err))
			}
		case !ran:
			log.Debug("heuristics pass skipped: another replica is making one or made one within the interval")
		case sum.Changed > 0:
			log.Info("heuristics pass", "candidates", sum.Candidates, "deposits", len(sum.Deposits), "clusters", sum.Clusters, "changed", sum.Changed)
		}
	})
}
