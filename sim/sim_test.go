package sim

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"google.golang.org/protobuf/proto"
)

func world(t testing.TB, cfg Config) *World {
	t.Helper()
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestDeterministic(t *testing.T) {
	a, b := world(t, Config{Seed: 7}), world(t, Config{Seed: 7})
	if !bytes.Equal(a.Curated(), b.Curated()) || !bytes.Equal(a.GroundTruth(), b.GroundTruth()) {
		t.Fatal("same seed gave different worlds")
	}
	for i := 0; i < 3; i++ {
		x, y := a.Next(500), b.Next(500)
		ex, ey := x.Events(), y.Events()
		if len(ex) != len(ey) {
			t.Fatalf("round %d: %d vs %d events", i, len(ex), len(ey))
		}
		for j := range ex {
			if ex[j].ID != ey[j].ID || !proto.Equal(ex[j].Msg, ey[j].Msg) {
				t.Fatalf("round %d event %d differs: %v vs %v", i, j, ex[j].Msg, ey[j].Msg)
			}
		}
	}
	c := world(t, Config{Seed: 8})
	if bytes.Equal(a.GroundTruth(), c.GroundTruth()) {
		t.Fatal("different seeds gave the same addresses")
	}
}

var intRe = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)
var signedRe = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// TestBalancesReconcile replays every transfer over the bootstrap balances and checks each
// published balance observation equals the replayed balance, and that nothing goes negative.
func TestBalancesReconcile(t *testing.T) {
	w := world(t, Config{Seed: 3, Chains: []string{"ethereum", "base", "solana", "tron", "bitcoin", "dogecoin", "ton", "bsc"}})
	boot := w.Bootstrap()
	bal := map[string]*big.Int{}
	key := func(chain, addr, tok string) string { return chain + "|" + addr + "|" + tok }
	for _, o := range boot.Balances {
		v, _ := new(big.Int).SetString(o.Balance, 10)
		bal[key(o.Chain, o.Address, o.TokenAddress)] = v
	}
	get := func(k string) *big.Int {
		if bal[k] == nil {
			bal[k] = new(big.Int)
		}
		return bal[k]
	}
	ids := map[string]bool{}
	// One block hash carries one balance per key: consumers keep the first they store.
	perBlock := map[string]string{}
	sameBlock := func(o *eventsv1.BalanceObservation) {
		k := key(o.Chain, o.Address, o.TokenAddress) + "|" + o.BlockHash
		if prev, ok := perBlock[k]; ok && prev != o.Balance {
			t.Fatalf("%s: observed %s and %s in one block", k, prev, o.Balance)
		}
		perBlock[k] = o.Balance
	}
	for _, o := range boot.Balances {
		sameBlock(o)
	}
	var transfers, swaps, obs, deposits int
	kinds := map[string]int{}
	for round := 0; round < 20; round++ {
		b := w.Next(1000)
		byTx := map[string]bool{}
		for _, tx := range b.Transactions {
			byTx[tx.Chain+tx.Hash] = tx.Success
			if !intRe.MatchString(tx.Value) || !intRe.MatchString(tx.Fee) {
				t.Fatalf("bad tx amounts %v", tx)
			}
		}
		for _, tr := range b.Transfers {
			transfers++
			if ids[tr.Chain+tr.Id] {
				t.Fatalf("duplicate transfer id %s", tr.Id)
			}
			ids[tr.Chain+tr.Id] = true
			if !strings.HasPrefix(tr.Id, tr.TransactionHash+"_") {
				t.Fatalf("transfer id %s does not start with its tx hash", tr.Id)
			}
			if ok, seen := byTx[tr.Chain+tr.TransactionHash]; !seen || !ok {
				t.Fatalf("transfer %s of a missing or failed transaction", tr.Id)
			}
			if !intRe.MatchString(tr.Amount) {
				t.Fatalf("amount %q", tr.Amount)
			}
			c, _ := chains.Lookup(tr.Chain)
			for _, a := range []string{tr.From, tr.To} {
				if n, err := address.Normalize(c.Type, a); err != nil || n != a {
					t.Fatalf("address %q on %s: %v (canonical %q)", a, tr.Chain, err, n)
				}
			}
			if tr.HistoricalUsd == nil || *tr.HistoricalUsd < 0 {
				t.Fatalf("transfer %s has no USD value", tr.Id)
			}
			v, _ := new(big.Int).SetString(tr.Amount, 10)
			from := get(key(tr.Chain, tr.From, tr.TokenAddress))
			from.Sub(from, v)
			if from.Sign() < 0 {
				t.Fatalf("transfer %s overdraws %s", tr.Id, tr.From)
			}
			to := get(key(tr.Chain, tr.To, tr.TokenAddress))
			to.Add(to, v)
		}
		for _, s := range b.Swaps {
			swaps++
			if !signedRe.MatchString(s.Amount0) || !signedRe.MatchString(s.Amount1) {
				t.Fatalf("swap amounts %q %q", s.Amount0, s.Amount1)
			}
			if strings.HasPrefix(s.Amount0, "-") == strings.HasPrefix(s.Amount1, "-") {
				t.Fatalf("swap %s: one side must be paid in, the other out: %s %s", s.Id, s.Amount0, s.Amount1)
			}
		}
		// Observations come at the end of a block; replay order within a batch is the order of
		// transfers, and an observation holds the balance after its block.
		for _, o := range b.Balances {
			obs++
			sameBlock(o)
			if o.BlockHash == "" {
				t.Fatal("observation without block hash")
			}
			if (o.SubaccountKind != "") != (o.OwnerAddress != "") {
				t.Fatalf("subaccount fields inconsistent: %v", o)
			}
		}
		for _, a := range b.Activities {
			kinds[a.Kind]++
			if a.Kind == KindDeposit {
				deposits++
			}
		}
	}
	// At the end every observation's newest value equals the replayed balance.
	latest := map[string]string{}
	w2 := world(t, Config{Seed: 3, Chains: []string{"ethereum", "base", "solana", "tron", "bitcoin", "dogecoin", "ton", "bsc"}})
	w2.Bootstrap()
	for round := 0; round <= 20; round++ {
		var b *Batch
		if round < 20 {
			b = w2.Next(1000)
		} else { // no transaction: the clock past every chain's open block ends it
			b = w2.NextUntil(w2.Now().Add(time.Hour), 0)
		}
		for _, o := range b.Balances {
			latest[key(o.Chain, o.Address, o.TokenAddress)] = o.Balance
		}
	}
	for k, v := range latest {
		if got := get(k).String(); got != v {
			t.Fatalf("%s: observed %s, replayed %s", k, v, got)
		}
	}
	if transfers < 15000 || swaps == 0 || obs == 0 || deposits == 0 {
		t.Fatalf("too little activity: %d transfers, %d swaps, %d observations, %d deposits", transfers, swaps, obs, deposits)
	}
	for _, k := range []string{KindDeposit, KindSweep, KindWithdrawal, KindSwap, KindTransfer, KindMint, KindStake, KindLend, KindDeploy, KindFailed} {
		if kinds[k] == 0 {
			t.Errorf("no %s activity in 20000 transactions", k)
		}
	}
}

func TestCuratedHasNoDepositAddresses(t *testing.T) {
	w := world(t, Config{Seed: 1})
	var f CuratedFile
	dec := json.NewDecoder(bytes.NewReader(w.Curated()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatal(err)
	}
	slug := regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,127}$`)
	roles := map[string]string{}
	for _, a := range w.Addresses() {
		roles[a.Address] = a.Role
	}
	ents := map[string]bool{}
	for _, e := range f.Entities {
		if !slug.MatchString(e.ID) {
			t.Errorf("entity id %q is not a slug", e.ID)
		}
		ents[e.ID] = true
	}
	seen := map[string]int{}
	for _, a := range f.Addresses {
		if !ents[a.Entity] {
			t.Errorf("address %s names unknown entity %s", a.Address, a.Entity)
		}
		seen[roles[a.Address]]++
		if _, err := chains.ParseType(a.ChainType); err != nil {
			t.Error(err)
		}
	}
	if seen[RoleDeposit] != 0 || seen[RoleWhale] != 0 || seen[RoleCustomer] != 0 {
		t.Fatalf("curated data leaks heuristics' targets: %v", seen)
	}
	for _, r := range []string{RoleHotWallet, RolePool, RoleRouter, RoleFund} {
		if seen[r] == 0 {
			t.Errorf("curated data has no %s", r)
		}
	}
}

func TestGroundTruth(t *testing.T) {
	w := world(t, Config{Seed: 1})
	rows, err := csv.NewReader(bytes.NewReader(w.GroundTruth())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "chain,address,entity,role" {
		t.Fatalf("header %v", rows[0])
	}
	valid := map[string]bool{RoleHotWallet: true, RoleDeposit: true, RolePool: true, RoleRouter: true, RoleFund: true, RoleWhale: true,
		RoleTreasury: true, RoleCustomer: true, RoleSubaccount: true}
	deposits := map[string]int{}
	for _, r := range rows[1:] {
		if !valid[r[3]] {
			t.Fatalf("role %q", r[3])
		}
		if r[3] == RoleDeposit {
			deposits[r[2]]++
		}
	}
	for _, ex := range []string{"binance-sim", "coinbase-sim", "kraken-sim", "okx-sim"} {
		if deposits[ex] < 40 {
			t.Errorf("%s has %d deposit addresses", ex, deposits[ex])
		}
	}
}

func TestLastDeposit(t *testing.T) {
	w := world(t, Config{Seed: 5})
	b := w.Next(2000)
	var want Activity
	for _, a := range b.Activities {
		if a.Kind == KindDeposit && a.Entity == "binance-sim" {
			want = a
		}
	}
	got, ok := w.LastDeposit("binance-sim")
	if !ok || got.TxHash != want.TxHash || len(got.TransferIDs) != 1 {
		t.Fatalf("last deposit %+v, want %+v", got, want)
	}
	deps := map[string]bool{}
	for _, a := range w.AddressesOf("binance-sim", RoleDeposit, got.Chain) {
		deps[a.Address] = true
	}
	if !deps[got.To] {
		t.Fatalf("deposit went to %s, not a binance-sim deposit address", got.To)
	}
	found := false
	for _, tr := range b.Transfers {
		if tr.Id == got.TransferIDs[0] {
			found = tr.To == got.To && tr.Amount == got.Amount
		}
	}
	if !found {
		t.Fatal("the deposit's transfer is not in the batch")
	}
}

func TestPricesMove(t *testing.T) {
	w := world(t, Config{Seed: 2, Chains: []string{"ethereum"}})
	p0, _ := w.Price("ethereum")
	b := w.NextUntil(w.Now().Add(48*time.Hour), 100)
	p1, _ := w.Price("ethereum")
	if p0 == p1 {
		t.Fatal("price did not move in 48h")
	}
	weth, _ := w.Price("weth")
	if weth != p1 {
		t.Fatalf("weth %v does not track ether %v", weth, p1)
	}
	var daily, hourly int
	for _, p := range b.Prices {
		switch p.Granularity {
		case eventsv1.PriceGranularity_PRICE_GRANULARITY_DAILY:
			daily++
		case eventsv1.PriceGranularity_PRICE_GRANULARITY_HOURLY:
			hourly++
		}
	}
	if daily == 0 || hourly == 0 {
		t.Fatalf("daily %d hourly %d", daily, hourly)
	}
	if _, ok := w.Price("bonk"); ok {
		t.Fatal("a token of no simulated chain is priced")
	}
}

func BenchmarkGenerate(b *testing.B) {
	w := world(b, Config{Seed: 1})
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n += len(w.Next(1000).Transfers)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "transfers/s")
}

// TestUTXOValueIsItsOutputs: a UTXO transaction's value is the coin its outputs pay away, which
// the simulator records as one transfer per output (no change outputs): value and valueUsd are
// its transfers' amounts and USD values summed, never 0 for a transaction that moved coin.
func TestUTXOValueIsItsOutputs(t *testing.T) {
	w := world(t, Config{Seed: 5, Chains: []string{"bitcoin", "dogecoin", "ethereum"}})
	w.Bootstrap()
	type sum struct {
		amount big.Int
		usd    float64
		n      int
	}
	var checked int
	for range 5 {
		b := w.Next(500)
		sums := map[string]*sum{}
		for _, tr := range b.Transfers {
			k := tr.Chain + "/" + tr.TransactionHash
			if sums[k] == nil {
				sums[k] = &sum{}
			}
			v, _ := new(big.Int).SetString(tr.Amount, 10)
			sums[k].amount.Add(&sums[k].amount, v)
			sums[k].usd += *tr.HistoricalUsd
			sums[k].n++
		}
		for _, tx := range b.Transactions {
			if c, _ := chains.Lookup(tx.Chain); c.Type != chains.TypeBitcoin && c.Type != chains.TypeDogecoin {
				continue
			}
			s := sums[tx.Chain+"/"+tx.Hash]
			if s == nil || s.n == 0 {
				t.Fatalf("%s %s: a UTXO transaction without outputs", tx.Chain, tx.Hash)
			}
			checked++
			if tx.Value != s.amount.String() || tx.ValueUsd == nil || math.Abs(*tx.ValueUsd-s.usd) > 1e-9*s.usd {
				t.Fatalf("%s %s: value %s (usd %v), its %d outputs pay %s (usd %v)", tx.Chain, tx.Hash, tx.Value,
					tx.ValueUsd, s.n, s.amount.String(), s.usd)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no UTXO transactions generated")
	}
}
