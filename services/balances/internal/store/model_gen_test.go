package store_test

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// The randomized world: two EVM chains (an address and its attribution cover both), 12
// addresses, the native coin and two tokens, three operator entities, a block every three hours
// from modelStart (the second chain's blocks 37 minutes later), so a run spans several UTC days;
// the retention is 24 h, so pruning reaches the older days.
const (
	modelRetention = 24 * time.Hour
	modelBlockGap  = 3 * time.Hour
	modelAddrs     = 12
)

var (
	modelChains   = []string{"ethereum", "polygon"}
	modelTokens   = []string{"", "0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000b2"}
	modelEntities = []string{"e1", "e2", "e3"}
	modelStart    = time.Date(2026, 3, 1, 0, 30, 0, 0, time.UTC)
)

func modelAddr(i int) string { return fmt.Sprintf("0x%040x", 0xabc000+i) }

func blockTime(chain string, block int64) time.Time {
	t := modelStart.Add(time.Duration(block) * modelBlockGap)
	if chain != modelChains[0] {
		t = t.Add(37 * time.Minute)
	}
	return t
}

type opKind int

const (
	opAppend opKind = iota
	opApply
	opReorg
	opAttr
	opPrune
)

// modelOp is one step: self-contained (the observations, hashes and versions it carries), so a
// sequence with steps left out still runs.
type modelOp struct {
	kind                opKind
	obs                 []store.Observation // append
	limit               int                 // apply: observations per round (0: rounds until nothing waits)
	chain               string              // reorg
	from                int64               // reorg
	orphaned, canonical []string            // reorg
	attrs               []store.Attribution // attributions
	pages               int64               // prune
}

func (op modelOp) String() string {
	switch op.kind {
	case opAppend:
		var b []string
		for _, o := range op.obs {
			b = append(b, fmt.Sprintf("%s/%s/%s@%d:%s=%s", o.Chain, o.Address[len(o.Address)-2:], tokenName(o.Token), o.BlockNumber, o.BlockHash, o.Balance))
		}
		return "append " + strings.Join(b, " ")
	case opApply:
		return fmt.Sprintf("apply limit=%d", op.limit)
	case opReorg:
		return fmt.Sprintf("reorg %s from=%d orphaned=%v canonical=%v", op.chain, op.from, op.orphaned, op.canonical)
	case opAttr:
		var b []string
		for _, a := range op.attrs {
			e := "-"
			if a.Entity != nil {
				e = a.Entity.ID
			}
			if a.Tombstone {
				e = "tombstone"
			}
			b = append(b, fmt.Sprintf("%s->%s v%d", a.Address[len(a.Address)-2:], e, a.Version))
		}
		return "attributions " + strings.Join(b, ", ")
	default:
		return fmt.Sprintf("prune pages=%d", op.pages)
	}
}

func tokenName(t string) string {
	if t == "" {
		return "native"
	}
	return t[len(t)-2:]
}

// modelGen generates a sequence of steps from a seed. It keeps the chains' state: each chain's
// tip, the canonical hash of each block and every hash a block number has had, and the balance
// each (key, block hash) reads (a block hash always carries the same balance).
type modelGen struct {
	rng      *rand.Rand
	tip      map[string]int64
	canon    map[string]map[int64]string
	hashes   map[string]map[int64][]string
	nhash    int
	bals     map[[4]string]*big.Int
	batches  [][]store.Observation
	versions map[string]int64
	version  int64
	reorgs   []modelOp
}

func newModelGen(seed uint64) *modelGen {
	g := &modelGen{rng: rand.New(rand.NewPCG(seed, 0x5eed)), tip: map[string]int64{}, canon: map[string]map[int64]string{},
		hashes: map[string]map[int64][]string{}, bals: map[[4]string]*big.Int{}, versions: map[string]int64{}}
	for _, c := range modelChains {
		g.tip[c] = 1
		g.canon[c], g.hashes[c] = map[int64]string{}, map[int64][]string{}
	}
	return g
}

func (g *modelGen) ops(n int) []modelOp {
	var out []modelOp
	for len(out) < n {
		switch r := g.rng.IntN(100); {
		case r < 38:
			out = append(out, g.appendOp())
		case r < 58:
			out = append(out, g.applyOp())
		case r < 70:
			out = append(out, g.reorgOp())
		case r < 88:
			out = append(out, g.attrOp())
		default:
			out = append(out, modelOp{kind: opPrune, pages: 1 + g.rng.Int64N(3)})
		}
	}
	return out
}

func (g *modelGen) applyOp() modelOp {
	if g.rng.IntN(2) == 0 {
		return modelOp{kind: opApply}
	}
	return modelOp{kind: opApply, limit: 1 + g.rng.IntN(6)}
}

// newHash gives block block of chain a hash it never had.
func (g *modelGen) newHash(chain string, block int64) string {
	g.nhash++
	h := fmt.Sprintf("0x%s%dh%d", chain[:1], block, g.nhash)
	g.hashes[chain][block] = append(g.hashes[chain][block], h)
	return h
}

func (g *modelGen) canonical(chain string, block int64) string {
	if h, ok := g.canon[chain][block]; ok {
		return h
	}
	h := g.newHash(chain, block)
	g.canon[chain][block] = h
	return h
}

// balance is what key reads at block hash: zero, small or far above 2^64 (18 decimals).
func (g *modelGen) balance(chain, addr, token, hash string) *big.Int {
	k := [4]string{chain, addr, token, hash}
	if v, ok := g.bals[k]; ok {
		return v
	}
	var v *big.Int
	switch r := g.rng.IntN(10); {
	case r < 2:
		v = new(big.Int)
	case r < 4:
		v = big.NewInt(g.rng.Int64N(1000))
	default:
		v = new(big.Int).Mul(big.NewInt(g.rng.Int64N(5_000_000)), big.NewInt(1e18))
		v.Add(v, big.NewInt(g.rng.Int64N(1e18)))
	}
	g.bals[k] = v
	return v
}

// appendOp is a batch of 1 to 5 observations, mostly at or near the tip (which moves on), some
// late (an older block), some of a hash the block no longer has; or a redelivered earlier batch.
func (g *modelGen) appendOp() modelOp {
	if len(g.batches) > 0 && g.rng.IntN(7) == 0 {
		return modelOp{kind: opAppend, obs: g.batches[g.rng.IntN(len(g.batches))]}
	}
	var obs []store.Observation
	for range 1 + g.rng.IntN(5) {
		chain := modelChains[g.rng.IntN(len(modelChains))]
		if g.rng.IntN(5) < 3 {
			g.tip[chain] += g.rng.Int64N(3)
		}
		block := max(1, g.tip[chain]-g.rng.Int64N(3))
		if g.rng.IntN(4) == 0 {
			block = 1 + g.rng.Int64N(g.tip[chain])
		}
		hash := g.canonical(chain, block)
		if hs := g.hashes[chain][block]; g.rng.IntN(7) == 0 {
			hash = hs[g.rng.IntN(len(hs))]
		}
		addr, token := modelAddr(g.rng.IntN(modelAddrs)), modelTokens[g.rng.IntN(len(modelTokens))]
		obs = append(obs, store.Observation{Chain: chain, Address: addr, Token: token, BlockNumber: block, BlockHash: hash,
			BlockTime: blockTime(chain, block), Balance: g.balance(chain, addr, token, hash), TokenDecimals: 18})
	}
	g.batches = append(g.batches, obs)
	return modelOp{kind: opAppend, obs: obs}
}

// reorgOp replaces the last blocks of a chain (or, one time in four, blocks far before the tip,
// deeper than the retention) with new hashes or hashes they had before; or redelivers the last
// reorg (an earlier one alone, after newer ones, is no redelivery the consumer makes: it
// replays from its committed offset, in order).
func (g *modelGen) reorgOp() modelOp {
	if len(g.reorgs) > 0 && g.rng.IntN(8) == 0 {
		return g.reorgs[len(g.reorgs)-1]
	}
	chain := modelChains[g.rng.IntN(len(modelChains))]
	tip := g.tip[chain]
	from := max(1, tip-g.rng.Int64N(3))
	to := tip
	if g.rng.IntN(4) == 0 {
		deep := int64(modelRetention/modelBlockGap) + 2
		from = 1 + g.rng.Int64N(max(1, tip-deep))
		to = min(tip, from+g.rng.Int64N(3))
	}
	op := modelOp{kind: opReorg, chain: chain, from: from}
	for b := from; b <= to; b++ {
		old := g.canonical(chain, b)
		op.orphaned = append(op.orphaned, old)
		next := ""
		if hs := g.hashes[chain][b]; len(hs) > 1 && g.rng.IntN(5) < 2 {
			next = hs[g.rng.IntN(len(hs))]
		}
		if next == "" || next == old {
			next = g.newHash(chain, b)
		}
		g.canon[chain][b] = next
		op.canonical = append(op.canonical, next)
	}
	g.reorgs = append(g.reorgs, op)
	return op
}

// attrOp attributes one or two addresses: to an entity, to no entity (a label only), a
// tombstone, or a stale version that must change nothing.
func (g *modelGen) attrOp() modelOp {
	op := modelOp{kind: opAttr}
	first := g.rng.IntN(modelAddrs)
	for i := range 1 + g.rng.IntN(2) {
		addr := modelAddr((first + i*5) % modelAddrs)
		a := store.Attribution{ChainType: "evm", Address: addr, Label: "label"}
		e := modelEntities[g.rng.IntN(len(modelEntities))]
		ent := &store.Entity{ID: e, Name: strings.ToUpper(e), Type: "cex", Version: 1}
		switch r := g.rng.IntN(20); {
		case r < 11:
			g.version++
			a.Entity, a.Version = ent, g.version
		case r < 14:
			g.version++
			a.Version = g.version
		case r < 17:
			g.version++
			a.Tombstone, a.Version = true, g.version
		default:
			a.Entity, a.Version = ent, g.versions[addr]-g.rng.Int64N(2)
		}
		if !a.Tombstone && a.Version > g.versions[addr] {
			g.versions[addr] = a.Version
		}
		op.attrs = append(op.attrs, a)
	}
	return op
}
