package sim

import (
	"math"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/holiman/uint256"
)

// Activity kinds.
const (
	KindDeposit    = "deposit"    // a holder paid into its deposit address at an exchange
	KindSweep      = "sweep"      // a deposit address was emptied into the exchange's hot wallet
	KindWithdrawal = "withdrawal" // an exchange hot wallet paid a holder
	KindSwap       = "swap"       // a DEX pool swap
	KindTransfer   = "transfer"   // holder to holder
	KindMint       = "mint"       // an issuer's treasury funded an exchange hot wallet
	KindStake      = "stake"      // to or from a Solana-style stake subaccount
	KindLend       = "lend"       // to or from a Solana-style lending subaccount
	KindDeploy     = "deploy"     // a contract creation
	KindFailed     = "failed"     // a reverted transaction (no transfers)
)

// Activity says what one simulated transaction meant, so tests can find, for example, the latest
// deposit to an exchange.
type Activity struct {
	Kind        string
	Chain       string
	TxHash      string
	BlockNumber uint64
	Time        time.Time
	// Entity is the exchange (deposit, sweep, withdrawal, mint), the pool's protocol (swap) or
	// the sender's entity (otherwise).
	Entity      string
	From, To    string // the addresses value moved between (for swaps: trader and pool)
	TransferIDs []string
	SwapID      string
	Token       string // token address, "" for the native coin
	PricingID   string
	Amount      string // exact, smallest unit
	USD         float64
}

// Batch is the output of one Next call (or of Bootstrap).
type Batch struct {
	Transactions []*eventsv1.Transaction
	Transfers    []*eventsv1.Transfer
	Swaps        []*eventsv1.Swap
	Balances     []*eventsv1.BalanceObservation
	Prices       []*eventsv1.Price
	MarketTokens []*eventsv1.MarketToken
	Tokens       []*eventsv1.Token
	Contracts    []*eventsv1.Contract
	Activities   []Activity
}

// Now is the simulated clock.
func (w *World) Now() time.Time { return w.now }

// Next simulates n transactions, moving the clock by Config.TxInterval each.
func (w *World) Next(n int) *Batch {
	return w.NextUntil(w.now.Add(time.Duration(n)*w.cfg.TxInterval), n)
}

// NextUntil simulates n transactions spread evenly over (Now, until] and leaves the clock at
// until (when it is later than Now). The runner uses it with the wall clock.
func (w *World) NextUntil(until time.Time, n int) *Batch {
	b := &Batch{}
	w.cur = b
	defer func() { w.cur = nil }()
	from := w.now
	span := until.Sub(from)
	if span < 0 {
		span = 0
	}
	for i := 1; i <= n; i++ {
		t := from.Add(time.Duration(float64(span) * float64(i) / float64(n)))
		w.advancePrices(t, b)
		w.now = t
		w.step(b)
	}
	if until.After(w.now) {
		w.advancePrices(until, b)
		w.now = until
	}
	w.flushBalances(b)
	return b
}

// LastActivity returns the newest activity of a kind concerning an entity (see Activity.Entity).
func (w *World) LastActivity(kind, entity string) (Activity, bool) {
	a, ok := w.lastAct[kind+"/"+entity]
	return a, ok
}

// LastDeposit returns the newest deposit to an exchange.
func (w *World) LastDeposit(exchange string) (Activity, bool) {
	return w.LastActivity(KindDeposit, exchange)
}

var chainWeight = map[string]int{"ethereum": 30, "base": 15, "arbitrum_one": 12, "bsc": 12, "polygon": 10, "optimism": 8,
	"avalanche": 6, "solana": 25, "tron": 15, "bitcoin": 6, "dogecoin": 3, "ton": 4}

func (w *World) pickChain() *chainState {
	total := 0
	for _, cs := range w.chains {
		total += chainWeight[cs.chain.Name]
	}
	x := w.r.IntN(total)
	for _, cs := range w.chains {
		x -= chainWeight[cs.chain.Name]
		if x < 0 {
			return cs
		}
	}
	return w.chains[0]
}

func (cs *chainState) pickToken(w *World) *token {
	x := w.r.IntN(cs.tokenW[len(cs.tokenW)-1])
	for i, c := range cs.tokenW {
		if x < c {
			return cs.tokens[i]
		}
	}
	return cs.tokens[0]
}

// pickHolder returns a customer (mostly), whale or fund.
func (w *World) pickHolder() *holder {
	x := w.r.IntN(100)
	switch {
	case x < 8 && len(w.funds) > 0:
		return w.funds[w.r.IntN(len(w.funds))]
	case x < 20 && len(w.whales) > 0:
		return w.whales[w.r.IntN(len(w.whales))]
	}
	return w.customers[w.r.IntN(len(w.customers))]
}

// sizeUSD draws a transfer's USD size for the holder's kind.
func (w *World) sizeUSD(h *holder) float64 {
	median, sigma := 600.0, 1.3
	switch h.entity.Type {
	case "fund":
		median, sigma = 1.5e6, 0.8
	case "individual":
		if h.wallets != nil && len(h.entity.ID) > 5 && h.entity.ID[:5] == "whale" {
			median, sigma = 2.5e5, 1.0
		}
	}
	return median * math.Exp(w.r.NormFloat64()*sigma)
}

// amountFor sizes a payment of about usd from a, at most 60% of what it holds.
func (w *World) amountFor(a *account, t *token, usd float64) *uint256.Int {
	v := t.units(usd/t.price.value, w.r)
	bal := &a.bal[t.idx]
	if v.Gt(bal) || v.IsZero() {
		v = new(uint256.Int).Mul(bal, uint256.NewInt(6))
		v.Div(v, uint256.NewInt(10))
	}
	return v
}

func (w *World) step(b *Batch) {
	cs := w.pickChain()
	x := w.r.IntN(100)
	switch {
	case x < 30:
		w.deposit(cs, b)
	case x < 48:
		w.withdrawal(cs, b)
	case x < 58:
		if !w.sweep(cs, b) {
			w.deposit(cs, b)
		}
	case x < 72:
		if !w.swap(cs, b) {
			w.transfer(cs, b)
		}
	case x < 86:
		w.transfer(cs, b)
	case x < 89:
		w.mint(cs, b)
	case x < 95:
		if !w.subaccount(cs, b) {
			w.deposit(cs, b)
		}
	case x < 96:
		if !w.deploy(cs, b) {
			w.transfer(cs, b)
		}
	default:
		w.deposit(cs, b)
	}
}

// tx is a transaction being built.
type tx struct {
	cs        *chainState
	hash      string
	index     uint32
	timeMs    int64
	from, to  *account
	toAddr    string
	value     uint256.Int
	method    string
	gasUsed   uint64
	act       Activity
	outputIdx int
}

func (w *World) beginTx(cs *chainState, from *account) *tx {
	n := cs.blockAt(w, w.now)
	if n != cs.block {
		w.flushChain(cs, nil)
		cs.block = n
		cs.blockHash = blockHash(w.cfg.Seed, cs.chain.Type, cs.chain.Name, n)
		cs.txIndex, cs.logIndex = 0, 0
	}
	t := &tx{cs: cs, hash: txHash(w.r, cs.chain.Type, w.hashBuf[:]), index: cs.txIndex, timeMs: cs.blockTime(w, n).UnixMilli(), from: from}
	cs.txIndex++
	t.act = Activity{Chain: cs.chain.Name, TxHash: t.hash, BlockNumber: n, Time: time.UnixMilli(t.timeMs).UTC()}
	return t
}

func (cs *chainState) blockAt(w *World, t time.Time) uint64 {
	d := t.Sub(w.cfg.Start)
	if d < 0 {
		d = 0
	}
	return cs.timing.first + uint64(d/cs.timing.interval)
}

func (cs *chainState) blockTime(w *World, n uint64) time.Time {
	return w.cfg.Start.Add(time.Duration(n-cs.timing.first) * cs.timing.interval)
}

func (cs *chainState) startBlock(w *World, t time.Time) {
	cs.block = cs.blockAt(w, t)
	cs.blockHash = blockHash(w.cfg.Seed, cs.chain.Type, cs.chain.Name, cs.block)
}

func (cs *chainState) utxo() bool {
	return cs.chain.Type == chains.TypeBitcoin || cs.chain.Type == chains.TypeDogecoin
}

// move transfers v of token t from one account to another and records the Transfer.
func (w *World) move(x *tx, from, to *account, t *token, v *uint256.Int, b *Batch) *eventsv1.Transfer {
	cs := x.cs
	from.bal[t.idx].Sub(&from.bal[t.idx], v)
	to.bal[t.idx].Add(&to.bal[t.idx], v)
	w.touch(cs, from, t.idx)
	w.touch(cs, to, t.idx)
	tr := &eventsv1.Transfer{
		Chain: cs.chain.Name, TransactionHash: x.hash, BlockHash: cs.blockHash, BlockNumber: cs.block, BlockTimeMs: x.timeMs,
		From: from.addr.Address, To: to.addr.Address, TokenAddress: t.address, TokenId: t.pricingID, TokenName: t.name,
		TokenSymbol: t.symbol, TokenDecimals: t.decimals, Amount: v.Dec(), FromIsContract: from.contract, ToIsContract: to.contract,
		TxIndex: x.index,
	}
	// Priced as ingest prices it: at the price in force at the block's time, not the current one.
	usd := t.usdAtBlock(v, x.timeMs)
	tr.HistoricalUsd = &usd
	switch {
	case cs.utxo():
		tr.Type = eventsv1.TransferType_TRANSFER_TYPE_EXTERNAL
		tr.Id = x.hash + "_" + strconv.Itoa(x.outputIdx)
		tr.LogIndex = uint32(x.outputIdx)
		x.outputIdx++
		// A UTXO transaction's value is the coin its outputs pay away from its inputs (change
		// returned to an input address excluded). The simulator spends no change outputs, so
		// every output it records (one transfer each) counts: value = its transfers' sum.
		x.value.Add(&x.value, v)
	case t.address == "":
		tr.Type = eventsv1.TransferType_TRANSFER_TYPE_EXTERNAL
		tr.Id = x.hash + "_ext"
		x.value.Add(&x.value, v)
	default:
		tr.Type = eventsv1.TransferType_TRANSFER_TYPE_TOKEN
		tr.LogIndex = cs.logIndex
		cs.logIndex++
		tr.Id = x.hash + "_" + strconv.FormatUint(uint64(tr.LogIndex), 10)
	}
	b.Transfers = append(b.Transfers, tr)
	x.act.TransferIDs = append(x.act.TransferIDs, tr.Id)
	if x.act.Amount == "" {
		x.act.From, x.act.To, x.act.Token, x.act.PricingID, x.act.Amount, x.act.USD = from.addr.Address, to.addr.Address, t.address, t.pricingID, tr.Amount, usd
	}
	return tr
}

// finish records the Transaction and the Activity.
func (w *World) finish(x *tx, b *Batch, kind, entity string, success bool) {
	cs := x.cs
	if x.gasUsed == 0 {
		switch {
		case x.method == "" && cs.chain.Type == chains.TypeEVM:
			x.gasUsed = 21000
		case cs.chain.Type == chains.TypeEVM:
			x.gasUsed = 45000 + w.r.Uint64N(20000)
		}
	}
	to := x.toAddr
	if to == "" && x.to != nil {
		to = x.to.addr.Address
	}
	gp := cs.timing.gasPrice
	var price uint64
	if gp[1] > gp[0] {
		price = gp[0] + w.r.Uint64N(gp[1]-gp[0])
	}
	fee := new(uint256.Int).Mul(uint256.NewInt(x.gasUsed), uint256.NewInt(price))
	switch cs.chain.Type {
	case chains.TypeSolana:
		fee.SetUint64(5000)
	case chains.TypeBitcoin, chains.TypeDogecoin:
		fee.SetUint64(200 * (gp[0] + w.r.Uint64N(gp[1]-gp[0]+1)))
	case chains.TypeTron:
		if x.method != "" {
			fee.SetUint64(13_000_000 + w.r.Uint64N(1_000_000))
		}
	}
	native := cs.tokens[0]
	valueUSD := native.usdAtBlock(&x.value, x.timeMs)
	feeUSD := native.usdAtBlock(fee, x.timeMs)
	method := x.method
	if cs.chain.Type != chains.TypeEVM {
		method = ""
	}
	b.Transactions = append(b.Transactions, &eventsv1.Transaction{
		Chain: cs.chain.Name, Hash: x.hash, BlockNumber: cs.block, BlockHash: cs.blockHash, BlockTimeMs: x.timeMs, TxIndex: x.index,
		From: x.from.addr.Address, To: to, Nonce: x.from.nonce, Success: success, Value: x.value.Dec(), GasUsed: x.gasUsed,
		GasPrice: strconv.FormatUint(price, 10), EffectiveGasPrice: strconv.FormatUint(price, 10), Fee: fee.Dec(),
		MethodId: method, ValueUsd: &valueUSD, FeeUsd: &feeUSD,
	})
	x.from.nonce++
	x.act.Kind, x.act.Entity = kind, entity
	if !success {
		x.act.Kind = KindFailed
	}
	b.Activities = append(b.Activities, x.act)
	w.lastAct[x.act.Kind+"/"+entity] = x.act
}

// pay is the common shape of a one-transfer transaction.
func (w *World) pay(cs *chainState, from, to *account, t *token, usd float64, kind, entity string, b *Batch) bool {
	v := w.amountFor(from, t, usd)
	if v.IsZero() {
		return false
	}
	x := w.beginTx(cs, from)
	if t.address != "" {
		x.method, x.toAddr = "0xa9059cbb", t.address
		if cs.chain.Type == chains.TypeEVM && w.r.Float64() < w.cfg.FailureRate {
			x.gasUsed = 30000 + w.r.Uint64N(5000)
			x.act.From, x.act.To, x.act.Token, x.act.PricingID = from.addr.Address, to.addr.Address, t.address, t.pricingID
			w.finish(x, b, kind, entity, false)
			return true
		}
	} else {
		x.to = to
	}
	w.move(x, from, to, t, v, b)
	if x.to == nil && x.toAddr == "" {
		x.to = to
	}
	w.finish(x, b, kind, entity, true)
	return true
}

func (w *World) deposit(cs *chainState, b *Batch) {
	for range 4 {
		h := w.pickHolder()
		wal := h.wallets[cs.chain.Name]
		if len(wal.deposits) == 0 {
			continue
		}
		d := wal.deposits[w.r.IntN(len(wal.deposits))]
		t := cs.pickToken(w)
		if w.pay(cs, wal, d, t, w.sizeUSD(h), KindDeposit, d.exchange.entity.ID, b) {
			if !d.dirty {
				d.dirty = true
			}
			return
		}
		// Nothing left to deposit: the exchange pays the holder out instead.
		w.withdrawTo(cs, d.exchange, wal, t, w.sizeUSD(h), b)
		return
	}
	w.transfer(cs, b)
}

func (w *World) withdrawal(cs *chainState, b *Batch) {
	h := w.pickHolder()
	wal := h.wallets[cs.chain.Name]
	ex := w.exchanges[w.r.IntN(len(w.exchanges))]
	if len(wal.deposits) > 0 {
		ex = wal.deposits[w.r.IntN(len(wal.deposits))].exchange
	}
	w.withdrawTo(cs, ex, wal, cs.pickToken(w), w.sizeUSD(h), b)
}

func (w *World) withdrawTo(cs *chainState, ex *exchange, to *account, t *token, usd float64, b *Batch) {
	hots := ex.hot[cs.chain.Name]
	hot := hots[w.r.IntN(len(hots))]
	if !w.pay(cs, hot, to, t, usd, KindWithdrawal, ex.entity.ID, b) {
		// The hot wallet is dry for this token: top it up from the other one or the treasury.
		w.mintTo(cs, hot, b)
	}
}

func (w *World) sweep(cs *chainState, b *Batch) bool {
	ex := w.exchanges[w.r.IntN(len(w.exchanges))]
	deps := ex.deposits[cs.chain.Name]
	if len(deps) == 0 {
		return false
	}
	start := w.r.IntN(len(deps))
	for i := range deps {
		d := deps[(start+i)%len(deps)]
		if !d.dirty {
			continue
		}
		hots := ex.hot[cs.chain.Name]
		hot := hots[w.r.IntN(len(hots))]
		swept := false
		for _, t := range cs.tokens {
			v := d.bal[t.idx]
			if v.IsZero() {
				continue
			}
			x := w.beginTx(cs, d)
			if t.address != "" {
				x.method, x.toAddr = "0xa9059cbb", t.address
			} else {
				x.to = hot
			}
			w.move(x, d, hot, t, &v, b)
			w.finish(x, b, KindSweep, ex.entity.ID, true)
			swept = true
		}
		d.dirty = false
		if swept {
			return true
		}
	}
	return false
}

func (w *World) transfer(cs *chainState, b *Batch) {
	h := w.pickHolder()
	to := w.pickHolder()
	if to == h {
		to = w.customers[w.r.IntN(len(w.customers))]
	}
	if to == h {
		return
	}
	wal := h.wallets[cs.chain.Name]
	if !w.pay(cs, wal, to.wallets[cs.chain.Name], cs.pickToken(w), w.sizeUSD(h), KindTransfer, h.entity.ID, b) {
		w.withdrawTo(cs, w.exchanges[w.r.IntN(len(w.exchanges))], wal, cs.tokens[0], w.sizeUSD(h), b)
	}
}

func (w *World) mint(cs *chainState, b *Batch) {
	ex := w.exchanges[w.r.IntN(len(w.exchanges))]
	hots := ex.hot[cs.chain.Name]
	w.mintTo(cs, hots[w.r.IntN(len(hots))], b)
}

func (w *World) mintTo(cs *chainState, hot *account, b *Batch) {
	ts := w.treasury[cs.chain.Name]
	if len(ts) == 0 {
		// No issuer on this chain: the exchange's other hot wallet rebalances native coin.
		for _, other := range hot.entityHot(w, cs) {
			if other != hot && w.pay(cs, other, hot, cs.tokens[0], 2e5*math.Exp(w.r.NormFloat64()*0.5), KindWithdrawal, hot.entity.ID, b) {
				return
			}
		}
		return
	}
	tr := ts[w.r.IntN(len(ts))]
	var t *token
	for _, tk := range cs.tokens[1:] {
		if !tr.bal[tk.idx].IsZero() {
			t = tk
			break
		}
	}
	if t == nil {
		return
	}
	w.pay(cs, tr, hot, t, 1e6*math.Exp(w.r.NormFloat64()), KindMint, hot.entity.ID, b)
}

func (a *account) entityHot(w *World, cs *chainState) []*account {
	for _, ex := range w.exchanges {
		if ex.entity == a.entity {
			return ex.hot[cs.chain.Name]
		}
	}
	return nil
}

func (w *World) swap(cs *chainState, b *Batch) bool {
	if len(cs.pools) == 0 {
		return false
	}
	p := cs.pools[w.r.IntN(len(cs.pools))]
	h := w.pickHolder()
	wal := h.wallets[cs.chain.Name]
	in, out := p.token0, p.token1
	if w.r.IntN(2) == 0 {
		in, out = out, in
	}
	vin := w.amountFor(wal, in, w.sizeUSD(h)/3)
	if vin.IsZero() {
		return false
	}
	// Sized at the prices of the block's time, the ones both legs' USD values are taken at (the
	// simulated clock may have moved past the block's opening and its price ticks).
	bt := cs.blockTime(w, cs.blockAt(w, w.now))
	outAmt := vin.Float64() / math.Pow10(int(in.decimals)) * in.price.at(bt) / out.price.at(bt) * 0.997
	vout := out.units(outAmt, w.r)
	half := new(uint256.Int).Rsh(&p.acct.bal[out.idx], 1)
	if vout.Gt(half) || vout.IsZero() {
		return false
	}
	x := w.beginTx(cs, wal)
	x.to = p.router
	x.method = map[string]string{"uniswap_v2": "0x38ed1739", "uniswap_v3": "0x414bf389"}[p.protocol]
	x.gasUsed = 110000 + w.r.Uint64N(60000)
	if cs.chain.Type == chains.TypeEVM && w.r.Float64() < w.cfg.FailureRate {
		x.gasUsed = 60000 + w.r.Uint64N(20000)
		w.finish(x, b, KindSwap, p.acct.entity.ID, false)
		return true
	}
	w.move(x, wal, p.acct, in, vin, b)
	w.move(x, p.acct, wal, out, vout, b)
	logIdx := cs.logIndex
	cs.logIndex++
	a0, a1 := "-"+vout.Dec(), vin.Dec()
	if in == p.token0 {
		a0, a1 = vin.Dec(), "-"+vout.Dec()
	}
	usd := in.usdAtBlock(vin, x.timeMs)
	s := &eventsv1.Swap{
		Id: x.hash + "_" + strconv.FormatUint(uint64(logIdx), 10), Chain: cs.chain.Name, TransactionHash: x.hash, BlockHash: cs.blockHash,
		BlockNumber: cs.block, BlockTimeMs: x.timeMs, ContractAddress: p.acct.addr.Address, Sender: p.router.addr.Address,
		Receiver: wal.addr.Address,
		Token0:   p.token0.address, Token0Id: p.token0.pricingID, Token0Name: p.token0.name, Token0Symbol: p.token0.symbol, Token0Decimals: p.token0.decimals, Amount0: a0,
		Token1: p.token1.address, Token1Id: p.token1.pricingID, Token1Name: p.token1.name, Token1Symbol: p.token1.symbol, Token1Decimals: p.token1.decimals, Amount1: a1,
		HistoricalUsd: &usd, Valid: true, Protocol: p.protocol, LogIndex: logIdx,
	}
	b.Swaps = append(b.Swaps, s)
	x.act.SwapID = s.Id
	x.act.To = p.acct.addr.Address
	w.finish(x, b, KindSwap, p.acct.entity.ID, true)
	return true
}

func (w *World) subaccount(cs *chainState, b *Batch) bool {
	if cs.chain.Type != chains.TypeSolana {
		return false
	}
	h := w.pickHolder()
	wal := h.wallets[cs.chain.Name]
	sub, kind, t := wal.stake, KindStake, cs.tokens[0]
	if w.r.IntN(2) == 0 {
		sub, kind, t = wal.lending, KindLend, cs.token("usd-coin")
	}
	if sub == nil || t == nil {
		return false
	}
	from, to := wal, sub
	if !sub.bal[t.idx].IsZero() && w.r.IntN(3) == 0 {
		from, to = sub, wal
	}
	return w.pay(cs, from, to, t, w.sizeUSD(h), kind, h.entity.ID, b)
}

func (w *World) deploy(cs *chainState, b *Batch) bool {
	if cs.chain.Type != chains.TypeEVM {
		return false
	}
	h := w.pickHolder()
	wal := h.wallets[cs.chain.Name]
	x := w.beginTx(cs, wal)
	x.method = "0x60806040"
	x.gasUsed = 400000 + w.r.Uint64N(2_000_000)
	created := newAddress(w.r, cs.chain.Type)
	w.finish(x, b, KindDeploy, h.entity.ID, true)
	last := b.Transactions[len(b.Transactions)-1]
	last.To, last.ContractCreated, last.BytecodeSize = "", created, uint32(1000+w.r.IntN(23000))
	return true
}

func (w *World) touch(cs *chainState, a *account, tok int) {
	k := touchKey{a, tok}
	if _, ok := cs.touched[k]; ok {
		return
	}
	cs.touched[k] = struct{}{}
	cs.touchList = append(cs.touchList, k)
}

// flushBalances emits the balances of each chain's block once it has ended by the clock. An
// observation is its block's end state: a block still open may take more transactions of the
// same keys, and a second observation of one block hash with another balance would contradict
// the first (consumers keep one balance per block; docs/balances.md).
func (w *World) flushBalances(b *Batch) {
	for _, cs := range w.chains {
		if cs.blockAt(w, w.now) != cs.block {
			w.flushChain(cs, b)
		}
	}
}

// flushChain emits the balance of every (address, token) touched in the chain's current block.
// With b nil it keeps them for the next flush into a batch (the block ended inside a batch).
func (w *World) flushChain(cs *chainState, b *Batch) {
	if b == nil {
		b = w.cur
	}
	if len(cs.touchList) == 0 {
		return
	}
	bt := cs.blockTime(w, cs.block).UnixMilli()
	for _, k := range cs.touchList {
		t := cs.tokens[k.tok]
		b.Balances = append(b.Balances, &eventsv1.BalanceObservation{
			Chain: cs.chain.Name, Address: k.acct.addr.Address, TokenAddress: t.address, TokenId: t.pricingID, TokenName: t.name,
			TokenSymbol: t.symbol, TokenDecimals: t.decimals, BlockNumber: cs.block, BlockTimeMs: bt, Balance: k.acct.bal[k.tok].Dec(),
			OwnerAddress: k.acct.addr.OwnerAddress, SubaccountKind: k.acct.addr.Kind, BlockHash: cs.blockHash,
		})
		delete(cs.touched, k)
	}
	cs.touchList = cs.touchList[:0]
}
