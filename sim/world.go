// Package sim simulates a blockchain world and produces the same events the EVM ingester
// publishes: transactions, transfers, swaps, exact balances, token metadata, the token registry
// and prices. It is deterministic: one seed and one sequence of calls give the same output, byte
// for byte.
//
// The world has exchanges (cex) with hot wallets and one deposit address per customer per
// chain, which customers pay into and which are swept into the hot wallets; DEX pools that
// swap; funds and whales moving large amounts; token issuers' treasuries; ERC-20-style tokens
// and native coins with prices that move; and, on Solana-style chains, stake and lending
// subaccounts owned by wallets. Curated returns what an operator would know (exchanges and
// their hot wallets, DEX pools and routers, funds — never deposit addresses) in the curated
// import format, and GroundTruth every address's entity and role so attribution heuristics can
// be scored.
//
// A World is not safe for concurrent use.
package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/holiman/uint256"
)

// Config shapes a world. Zero values take the documented defaults.
type Config struct {
	Seed int64
	// Chains to simulate (catalogue names); default DefaultChains.
	Chains []string
	// Start is the simulated clock's start; default 2025-01-01T00:00:00Z.
	Start time.Time
	// TxInterval is how far Next moves the clock per transaction; default 250ms.
	TxInterval time.Duration
	// PriceInterval is how often prices move (and a tick is published); default 1 minute.
	PriceInterval time.Duration
	// Exchanges (at most 6, default 4), customers per exchange (default 40), funds (at most 5,
	// default 3), whales (default 8).
	Exchanges            int
	CustomersPerExchange int
	Funds                int
	Whales               int
	// FailureRate is the share of EVM token transfers and swaps that revert; default 0.01,
	// negative for none.
	FailureRate float64
}

func (c *Config) defaults() error {
	if len(c.Chains) == 0 {
		c.Chains = DefaultChains
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.TxInterval <= 0 {
		c.TxInterval = 250 * time.Millisecond
	}
	if c.PriceInterval <= 0 {
		c.PriceInterval = time.Minute
	}
	if c.Exchanges <= 0 {
		c.Exchanges = 4
	}
	if c.Exchanges > len(exchangeNames) {
		return fmt.Errorf("sim: at most %d exchanges", len(exchangeNames))
	}
	if c.CustomersPerExchange <= 0 {
		c.CustomersPerExchange = 40
	}
	if c.Funds <= 0 {
		c.Funds = 3
	}
	if c.Funds > len(fundNames) {
		return fmt.Errorf("sim: at most %d funds", len(fundNames))
	}
	if c.Whales <= 0 {
		c.Whales = 8
	}
	if c.FailureRate == 0 {
		c.FailureRate = 0.01
	}
	if c.FailureRate < 0 {
		c.FailureRate = 0
	}
	return nil
}

// Roles of simulated addresses (the ground truth's role column).
const (
	RoleHotWallet = "hot_wallet"
	RoleDeposit   = "deposit"
	RolePool      = "pool"
	RoleRouter    = "router"
	RoleFund      = "fund"
	RoleWhale     = "whale"
	RoleTreasury  = "treasury"
	RoleCustomer  = "customer"
	// RoleSubaccount marks Solana-style stake and lending subaccounts; they are listed in the
	// ground truth under their owner's entity.
	RoleSubaccount = "subaccount"
)

// Entity is a simulated real-world actor.
type Entity struct {
	ID      string // slug, e.g. "binance-sim"
	Name    string
	Type    string // cex, dex, fund, individual, issuer
	Website string
	// Curated says whether an operator would know it (it appears in Curated).
	Curated bool
}

// Address is one simulated address.
type Address struct {
	Chain   string
	Address string
	Entity  string // entity id
	Role    string
	Label   string // e.g. "Hot Wallet 1"; empty for unlabeled roles
	// Exchange is the exchange a deposit address belongs to (also Entity) and Owner the
	// customer entity paying into it; Owner is also set for subaccounts.
	Owner        string
	OwnerAddress string // subaccounts: the owning wallet
	Kind         string // subaccounts: "stake" or "lending"
	Contract     bool
}

type price struct {
	spec  assetSpec
	value float64
	track *price
	// hist is the recent ticks, oldest first, back to the newest one in force a block interval
	// before the latest: a transfer is priced at its block's time, which can be before it.
	hist []pricePoint
}

type pricePoint struct {
	at    time.Time
	value float64
}

// at returns the price in force at t: the newest recorded tick at or before it (the oldest kept
// when t is before every one).
func (p *price) at(t time.Time) float64 {
	for i := len(p.hist) - 1; i >= 0; i-- {
		if !p.hist[i].at.After(t) {
			return p.hist[i].value
		}
	}
	if len(p.hist) > 0 {
		return p.hist[0].value
	}
	return p.value
}

type token struct {
	idx       int // index in chainState.tokens (0 = native)
	chain     *chainState
	pricingID string
	name      string
	symbol    string
	decimals  int32
	address   string // "" for the native coin
	weight    int
	price     *price
}

type account struct {
	addr     Address
	chain    *chainState
	entity   *Entity
	bal      []uint256.Int // per token of the chain
	contract bool
	// deposit addresses this account (a customer wallet) pays into, one per exchange it uses
	deposits []*account
	// for a deposit address: its exchange
	exchange *exchange
	// Solana-style subaccounts of a wallet
	stake, lending *account
	dirty          bool   // holds an unswept balance (deposit addresses)
	nonce          uint64 // transactions sent
}

type pool struct {
	acct     *account
	token0   *token
	token1   *token
	protocol string
	router   *account
	label    string
}

type exchange struct {
	entity   *Entity
	hot      map[string][]*account // chain → hot wallets
	deposits map[string][]*account // chain → deposit addresses
}

type chainState struct {
	chain    chains.Chain
	timing   chainTiming
	tokens   []*token
	tokenW   []int // cumulative weights of tokens[1:] for picking
	accounts []*account
	pools    []*pool
	routers  []*account
	// block being filled
	block     uint64
	blockHash string
	txIndex   uint32
	logIndex  uint32
	touched   map[touchKey]struct{}
	touchList []touchKey
}

type touchKey struct {
	acct *account
	tok  int
}

// World is a simulated world. Build it with New.
type World struct {
	cfg       Config
	r         *rand.Rand
	now       time.Time
	priceAt   time.Time
	priceKeep time.Duration // the longest block interval: how far back a block's time can be
	prices    map[string]*price
	priceList []*price
	chains    []*chainState
	byName    map[string]*chainState
	entities  []*Entity
	entityBy  map[string]*Entity
	exchanges []*exchange
	customers []*customer
	funds     []*holder
	whales    []*holder
	treasury  map[string][]*account // chain → issuer treasuries
	addresses []*account
	lastAct   map[string]Activity // kind/entity → latest activity
	hashBuf   [64]byte
	cur       *Batch // the batch being filled
}

type customer struct {
	entity  *Entity
	wallets map[string]*account // chain → wallet
}

// holder is a fund or whale: wallets per chain and deposit addresses at some exchanges.
type holder = customer

// New builds a world from cfg.
func New(cfg Config) (*World, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	w := &World{
		cfg: cfg, now: cfg.Start.UTC(), priceAt: cfg.Start.UTC(), prices: map[string]*price{},
		byName: map[string]*chainState{}, entityBy: map[string]*Entity{}, treasury: map[string][]*account{},
		lastAct: map[string]Activity{},
	}
	var seed [32]byte
	for i := 0; i < 8; i++ {
		seed[i] = byte(uint64(cfg.Seed) >> (8 * i))
	}
	copy(seed[8:], "chainintel-simulator-v1")
	w.r = rand.New(rand.NewChaCha8(seed))

	for _, a := range assets {
		p := &price{spec: a, value: a.price}
		w.prices[a.pricingID] = p
		w.priceList = append(w.priceList, p)
	}
	for _, p := range w.priceList {
		if p.spec.tracks != "" {
			p.track = w.prices[p.spec.tracks]
			p.value = p.track.value
		}
	}
	w.recordPrices()
	seen := map[string]bool{}
	for _, name := range cfg.Chains {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		c, ok := chains.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("sim: unknown chain %q", name)
		}
		w.addChain(c)
	}
	if len(w.chains) == 0 {
		return nil, errors.New("sim: no chains")
	}
	w.buildEntities()
	for _, cs := range w.chains {
		cs.startBlock(w, w.now)
	}
	return w, nil
}

func (w *World) addChain(c chains.Chain) {
	cs := &chainState{chain: c, timing: timings[c.Name], touched: map[touchKey]struct{}{}}
	w.priceKeep = max(w.priceKeep, cs.timing.interval)
	native := &token{idx: 0, chain: cs, pricingID: c.NativePricingID, name: c.NativeName, symbol: c.NativeSymbol,
		decimals: c.NativeDecimals, price: w.prices[c.NativePricingID], weight: 40}
	cs.tokens = append(cs.tokens, native)
	for _, ts := range tokensFor(c) {
		p := w.prices[ts.pricingID]
		t := &token{idx: len(cs.tokens), chain: cs, pricingID: ts.pricingID, name: p.spec.name, symbol: p.spec.symbol,
			decimals: ts.decimals, address: addressFrom(c.Type, "token:"+c.Name+":"+ts.pricingID), weight: ts.weight, price: p}
		cs.tokens = append(cs.tokens, t)
	}
	total := 0
	for _, t := range cs.tokens {
		total += t.weight
		cs.tokenW = append(cs.tokenW, total)
	}
	w.chains = append(w.chains, cs)
	w.byName[c.Name] = cs
}

func (w *World) entity(id, name, typ, website string, curated bool) *Entity {
	e := &Entity{ID: id, Name: name, Type: typ, Website: website, Curated: curated}
	w.entities = append(w.entities, e)
	w.entityBy[id] = e
	return e
}

// newAccount adds an address with an initial holding worth about usd of each token.
func (w *World) newAccount(cs *chainState, e *Entity, role, label string, usd float64) *account {
	a := &account{
		addr:   Address{Chain: cs.chain.Name, Address: newAddress(w.r, cs.chain.Type), Entity: e.ID, Role: role, Label: label},
		chain:  cs,
		entity: e,
		bal:    make([]uint256.Int, len(cs.tokens)),
	}
	if usd > 0 {
		for i, t := range cs.tokens {
			v := usd * math.Exp(w.r.NormFloat64()*0.5)
			a.bal[i] = *t.units(v/t.price.value, w.r)
		}
	}
	cs.accounts = append(cs.accounts, a)
	w.addresses = append(w.addresses, a)
	return a
}

func (w *World) buildEntities() {
	// Token issuers: one treasury per chain for the stablecoins.
	issuers := []struct{ id, name, pricing string }{{"circle-sim", "Circle (simulated)", "usd-coin"}, {"tether-sim", "Tether Treasury (simulated)", "tether"}}
	for _, is := range issuers {
		e := w.entity(is.id, is.name, "issuer", "", false)
		for _, cs := range w.chains {
			if cs.token(is.pricing) == nil {
				continue
			}
			a := w.newAccount(cs, e, RoleTreasury, "Treasury", 0)
			t := cs.token(is.pricing)
			a.bal[t.idx] = *t.units(5e9, w.r)
			a.bal[0] = *cs.tokens[0].units(1e5/cs.tokens[0].price.value, w.r)
			w.treasury[cs.chain.Name] = append(w.treasury[cs.chain.Name], a)
		}
	}
	// Exchanges with hot wallets and deposit addresses.
	for i := 0; i < w.cfg.Exchanges; i++ {
		n := exchangeNames[i]
		ex := &exchange{entity: w.entity(n.id, n.name, "cex", n.website, true), hot: map[string][]*account{}, deposits: map[string][]*account{}}
		for _, cs := range w.chains {
			for h := 1; h <= 2; h++ {
				ex.hot[cs.chain.Name] = append(ex.hot[cs.chain.Name], w.newAccount(cs, ex.entity, RoleHotWallet, fmt.Sprintf("Hot Wallet %d", h), 4e7))
			}
		}
		w.exchanges = append(w.exchanges, ex)
	}
	w.buildDEX()
	// Funds and whales: wallets on every chain, deposit addresses at two exchanges.
	for i := 0; i < w.cfg.Funds; i++ {
		e := w.entity(fundNames[i].id, fundNames[i].name, "fund", "", true)
		w.funds = append(w.funds, w.newHolder(e, RoleFund, "Fund Wallet", 6e6, 2))
	}
	for i := 0; i < w.cfg.Whales; i++ {
		e := w.entity(fmt.Sprintf("whale-%02d-sim", i+1), fmt.Sprintf("Whale %d (simulated)", i+1), "individual", "", false)
		w.whales = append(w.whales, w.newHolder(e, RoleWhale, "", 2e6, 2))
	}
	// Retail customers, each with a home exchange (and sometimes a second one).
	for i := 0; i < w.cfg.Exchanges*w.cfg.CustomersPerExchange; i++ {
		e := w.entity(fmt.Sprintf("customer-%04d-sim", i+1), fmt.Sprintf("Customer %d (simulated)", i+1), "individual", "", false)
		n := 1
		if w.r.IntN(4) == 0 {
			n = 2
		}
		c := w.newHolderAt(e, RoleCustomer, "", 3e4, []int{i % w.cfg.Exchanges, (i + 1 + w.r.IntN(w.cfg.Exchanges)) % w.cfg.Exchanges}[:n])
		w.customers = append(w.customers, c)
	}
}

// buildDEX creates one protocol entity per chain family, a router and pools per chain.
func (w *World) buildDEX() {
	var uni, ray *Entity
	for _, cs := range w.chains {
		specs := poolsFor(cs.chain)
		if len(specs) == 0 {
			continue
		}
		var e *Entity
		if cs.chain.Type == chains.TypeSolana {
			if ray == nil {
				ray = w.entity("raydium-sim", "Raydium (simulated)", "dex", "https://raydium.example", true)
			}
			e = ray
		} else {
			if uni == nil {
				uni = w.entity("uniswap-sim", "Uniswap (simulated)", "dex", "https://uniswap.example", true)
			}
			e = uni
		}
		routers := map[string]*account{}
		for _, ps := range specs {
			rt := routers[ps.protocol]
			if rt == nil {
				label := "Router"
				if cs.chain.Type == chains.TypeEVM {
					label = map[string]string{"uniswap_v2": "V2 Router", "uniswap_v3": "V3 Router"}[ps.protocol]
				}
				rt = w.newAccount(cs, e, RoleRouter, label, 0)
				rt.contract = true
				routers[ps.protocol] = rt
				cs.routers = append(cs.routers, rt)
			}
			a, b := cs.token(ps.a), cs.token(ps.b)
			// token0 is the lower address, as Uniswap orders them.
			if b.address < a.address {
				a, b = b, a
			}
			label := fmt.Sprintf("%s/%s Pool", a.symbol, b.symbol)
			acct := w.newAccount(cs, e, RolePool, label, 0)
			acct.contract = true
			acct.bal[a.idx] = *a.units(3e7/a.price.value, w.r)
			acct.bal[b.idx] = *b.units(3e7/b.price.value, w.r)
			cs.pools = append(cs.pools, &pool{acct: acct, token0: a, token1: b, protocol: ps.protocol, router: rt, label: label})
		}
	}
}

func (w *World) newHolder(e *Entity, role, label string, usd float64, nEx int) *holder {
	idx := w.r.Perm(len(w.exchanges))
	if nEx > len(idx) {
		nEx = len(idx)
	}
	return w.newHolderAt(e, role, label, usd, idx[:nEx])
}

func (w *World) newHolderAt(e *Entity, role, label string, usd float64, exIdx []int) *holder {
	h := &holder{entity: e, wallets: map[string]*account{}}
	for _, cs := range w.chains {
		wal := w.newAccount(cs, e, role, label, usd)
		h.wallets[cs.chain.Name] = wal
		for _, xi := range exIdx {
			ex := w.exchanges[xi]
			if slices.ContainsFunc(wal.deposits, func(d *account) bool { return d.exchange == ex }) {
				continue
			}
			d := w.newAccount(cs, ex.entity, RoleDeposit, "", 0)
			d.addr.Owner = e.ID
			d.exchange = ex
			wal.deposits = append(wal.deposits, d)
			ex.deposits[cs.chain.Name] = append(ex.deposits[cs.chain.Name], d)
		}
		if cs.chain.Type == chains.TypeSolana {
			for _, kind := range []string{"stake", "lending"} {
				sub := w.newAccount(cs, e, RoleSubaccount, "", 0)
				sub.addr.OwnerAddress, sub.addr.Kind, sub.addr.Owner = wal.addr.Address, kind, e.ID
				if kind == "stake" {
					wal.stake = sub
				} else {
					wal.lending = sub
				}
			}
		}
	}
	return h
}

func (cs *chainState) token(pricingID string) *token {
	for _, t := range cs.tokens {
		if t.pricingID == pricingID {
			return t
		}
	}
	return nil
}

// units converts an amount of whole tokens into the smallest unit, keeping about 17
// significant digits and filling the rest with random digits so amounts look like real ones.
func (t *token) units(amount float64, r *rand.Rand) *uint256.Int {
	if amount <= 0 || math.IsNaN(amount) || math.IsInf(amount, 0) {
		return new(uint256.Int)
	}
	dec := int(t.decimals)
	s := dec
	if mag := int(math.Floor(math.Log10(amount))) + 1; mag+s > 17 {
		s = 17 - mag
	}
	if s < 0 {
		s = 0
	}
	m := uint64(amount * math.Pow10(s))
	v := uint256.NewInt(m)
	if rest := dec - s; rest > 0 {
		v.Mul(v, pow10(rest))
		low := new(uint256.Int)
		if rest <= 19 {
			low.SetUint64(r.Uint64N(pow10u(rest)))
		} else {
			low.SetUint64(r.Uint64())
		}
		v.Add(v, low)
	}
	return v
}

func pow10(n int) *uint256.Int {
	return new(uint256.Int).Exp(uint256.NewInt(10), uint256.NewInt(uint64(n)))
}

func pow10u(n int) uint64 {
	v := uint64(1)
	for range n {
		v *= 10
	}
	return v
}

// usdAtBlock values an amount in the smallest unit at the price in force at a block's time (ms),
// as ingest prices what it reads.
func (t *token) usdAtBlock(v *uint256.Int, timeMs int64) float64 {
	return t.usdAt(v, t.price.at(time.UnixMilli(timeMs)))
}

// usdAt values an amount in the smallest unit at price.
func (t *token) usdAt(v *uint256.Int, price float64) float64 {
	return v.Float64() / math.Pow10(int(t.decimals)) * price
}
