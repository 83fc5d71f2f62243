package sim

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// Entities returns every simulated entity (exchanges, DEXs, funds, whales, customers, issuers).
func (w *World) Entities() []Entity {
	out := make([]Entity, len(w.entities))
	for i, e := range w.entities {
		out[i] = *e
	}
	return out
}

// Addresses returns every simulated address with its entity and role, in creation order.
func (w *World) Addresses() []Address {
	out := make([]Address, len(w.addresses))
	for i, a := range w.addresses {
		out[i] = a.addr
		out[i].Contract = a.contract
	}
	return out
}

// AddressesOf returns an entity's addresses with the given role ("" for all) on a chain ("" for
// every chain).
func (w *World) AddressesOf(entity, role, chain string) []Address {
	var out []Address
	for _, a := range w.addresses {
		if a.addr.Entity == entity && (role == "" || a.addr.Role == role) && (chain == "" || a.addr.Chain == chain) {
			out = append(out, a.addr)
		}
	}
	return out
}

// Chains returns the simulated chain names.
func (w *World) Chains() []string {
	out := make([]string, len(w.chains))
	for i, cs := range w.chains {
		out[i] = cs.chain.Name
	}
	return out
}

// CuratedFile is the operator curated-data import format (docs/contracts.md).
type CuratedFile struct {
	Entities  []CuratedEntity  `json:"entities"`
	Addresses []CuratedAddress `json:"addresses"`
	Tags      []CuratedTag     `json:"tags"`
}

// CuratedEntity is an entity of the curated format.
type CuratedEntity struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Note        string `json:"note"`
	Description string `json:"description"`
	Website     string `json:"website"`
	Twitter     string `json:"twitter"`
	LinkedIn    string `json:"linkedin"`
	Service     string `json:"service"`
}

// CuratedAddress is an address of the curated format.
type CuratedAddress struct {
	ChainType  string       `json:"chainType"`
	Address    string       `json:"address"`
	Entity     string       `json:"entity"`
	Label      string       `json:"label"`
	Confidence float64      `json:"confidence"`
	Tags       []CuratedRef `json:"tags"`
}

// CuratedRef is a tag reference on an address.
type CuratedRef struct {
	ID     string `json:"id"`
	Params string `json:"params"`
}

// CuratedTag is a tag definition.
type CuratedTag struct {
	ID              string `json:"id"`
	Label           string `json:"label"`
	Rank            int    `json:"rank"`
	DisablePage     bool   `json:"disablePage"`
	ExcludeEntities bool   `json:"excludeEntities"`
}

var roleTag = map[string]string{RoleHotWallet: "exchange-hot-wallet", RolePool: "dex-pool", RoleRouter: "dex-router", RoleFund: "fund"}

// CuratedData is what an operator would know about the world: exchanges and their hot wallets,
// DEX protocols with their pools and routers, and funds. Deposit addresses, whales, customers,
// issuers and subaccounts are left out; they are for heuristics to find.
func (w *World) CuratedData() CuratedFile {
	f := CuratedFile{Entities: []CuratedEntity{}, Addresses: []CuratedAddress{}, Tags: []CuratedTag{
		{ID: "exchange-hot-wallet", Label: "Exchange hot wallet", Rank: 10},
		{ID: "dex-pool", Label: "DEX pool", Rank: 20},
		{ID: "dex-router", Label: "DEX router", Rank: 21},
		{ID: "fund", Label: "Fund", Rank: 30},
	}}
	for _, e := range w.entities {
		if !e.Curated {
			continue
		}
		f.Entities = append(f.Entities, CuratedEntity{ID: e.ID, Name: e.Name, Type: e.Type, Website: e.Website,
			Description: "Simulated " + e.Type + " from the chainintel simulator."})
	}
	for _, a := range w.addresses {
		tag, ok := roleTag[a.addr.Role]
		if !ok || !a.entity.Curated {
			continue
		}
		c, _ := chains.Lookup(a.addr.Chain)
		label := a.addr.Label
		if label == "" {
			label = a.entity.Name
		}
		f.Addresses = append(f.Addresses, CuratedAddress{ChainType: string(c.Type), Address: a.addr.Address, Entity: a.addr.Entity,
			Label: label, Confidence: 1, Tags: []CuratedRef{{ID: tag}}})
	}
	return f
}

// Curated returns CuratedData as curated.json.
func (w *World) Curated() []byte {
	b, err := json.MarshalIndent(w.CuratedData(), "", "  ")
	if err != nil {
		panic(fmt.Sprintf("sim: marshal curated data: %v", err)) // plain structs cannot fail
	}
	return append(b, '\n')
}

// GroundTruthRow is one line of ground_truth.csv.
type GroundTruthRow struct{ Chain, Address, Entity, Role string }

// GroundTruthRows lists every simulated address that belongs to an entity, with its role.
// Subaccounts are listed under their owner with role "subaccount".
func (w *World) GroundTruthRows() []GroundTruthRow {
	out := make([]GroundTruthRow, 0, len(w.addresses))
	for _, a := range w.addresses {
		out = append(out, GroundTruthRow{a.addr.Chain, a.addr.Address, a.addr.Entity, a.addr.Role})
	}
	return out
}

// GroundTruth returns ground_truth.csv (header chain,address,entity,role).
func (w *World) GroundTruth() []byte {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	_ = cw.Write([]string{"chain", "address", "entity", "role"})
	for _, r := range w.GroundTruthRows() {
		_ = cw.Write([]string{r.Chain, r.Address, r.Entity, r.Role})
	}
	cw.Flush()
	return buf.Bytes()
}

// WriteFiles writes curated.json and ground_truth.csv into dir.
func (w *World) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "curated.json"), w.Curated(), 0o644); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ground_truth.csv"), w.GroundTruth(), 0o644); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	return nil
}

// Len is the number of events in the batch.
func (b *Batch) Len() int {
	return len(b.Transactions) + len(b.Transfers) + len(b.Swaps) + len(b.Balances) + len(b.Prices) + len(b.MarketTokens) + len(b.Tokens) + len(b.Contracts)
}

// Events returns the batch as events to publish, with the platform's topics, keys and ids
// derived from the facts (so publishing a batch twice is deduplicated by consumers). Registry
// and prices come first, then transactions, transfers, swaps and balances.
func (b *Batch) Events() []eventbus.Event {
	ev := make([]eventbus.Event, 0, b.Len())
	for _, m := range b.MarketTokens {
		ev = append(ev, eventbus.Event{Topic: eventsv1.TopicMarketTokens, Key: m.PricingId, Msg: m, ID: "market-token:" + m.PricingId})
	}
	for _, m := range b.Tokens {
		ev = append(ev, eventbus.Event{Topic: eventsv1.TopicTokens, Key: m.Chain + ":" + m.Address, Msg: m, ID: eventsv1.TokenEventID(m)})
	}
	for _, m := range b.Contracts {
		ev = append(ev, eventbus.Event{Topic: eventsv1.TopicContracts, Key: m.Chain + ":" + m.Address, Msg: m, ID: eventsv1.ContractEventID(m)})
	}
	for _, m := range b.Prices {
		ev = append(ev, eventbus.Event{Topic: eventsv1.TopicPrices, Key: m.PricingId, Msg: m,
			ID: "price:" + m.PricingId + ":" + strconv.FormatInt(m.TimeMs, 10) + ":" + strconv.Itoa(int(m.Granularity))})
	}
	for _, m := range b.Transactions {
		ev = append(ev, eventbus.Event{Topic: eventsv1.TopicTransactions, Key: eventsv1.ChainKey(m.Chain, m.Hash), Msg: m, ID: eventsv1.TransactionEventID(m)})
	}
	for _, m := range b.Transfers {
		ev = append(ev, eventbus.Event{Topic: eventsv1.TopicTransfers, Key: eventsv1.ChainKey(m.Chain, m.TransactionHash), Msg: m, ID: eventsv1.TransferEventID(m)})
	}
	for _, m := range b.Swaps {
		ev = append(ev, eventbus.Event{Topic: eventsv1.TopicSwaps, Key: eventsv1.ChainKey(m.Chain, m.TransactionHash), Msg: m, ID: eventsv1.SwapEventID(m)})
	}
	for _, m := range b.Balances {
		ev = append(ev, eventbus.Event{Topic: eventsv1.TopicBalances, Key: m.Chain + ":" + m.Address, Msg: m,
			ID: "balance:" + m.Chain + ":" + m.Address + ":" + m.TokenAddress + ":" + m.BlockHash + ":" + m.Balance})
	}
	return ev
}
