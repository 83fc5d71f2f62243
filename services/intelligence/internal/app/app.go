// Package app answers the intelligence API: address attributions from the in-memory cache,
// decorated with the caller's own labels; entities, summaries, predictions, contracts, tokens
// and tags from the store.
package app

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/render"
	balclient "github.com/chainintel/chainintel/services/balances/client"
	"github.com/chainintel/chainintel/services/intelligence/client"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/chainintel/chainintel/services/intelligence/internal/transfersclient"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// Store is what the app reads from the database.
type Store interface {
	Entity(ctx context.Context, id string) (attribution.Entity, error)
	EntityTags(ctx context.Context, entityID string) ([]store.PopulatedTag, error)
	Tag(ctx context.Context, id string) (attribution.Tag, error)
	TagParams(ctx context.Context, id string, limit, offset int) ([]string, error)
	TagSummary(ctx context.Context, id string) (store.TagSummary, error)
	EntityActivity(ctx context.Context, entityID string) (store.EntityActivity, error)
	EntityActivityWith(ctx context.Context, entityID string, adds []store.AddressKey) (store.EntityActivity, []store.AddressKey, error)
	PredictedBalances(ctx context.Context, entityID string) ([]store.HeldBalance, error)
	ContractByAddress(ctx context.Context, chain, addr string) (store.ContractInfo, error)
	MarketToken(ctx context.Context, id string) (store.MarketToken, error)
	PricingIDByDeployment(ctx context.Context, chain, addr string) (string, error)
	TokenByAddress(ctx context.Context, chain, addr string) (store.Token, error)
	Quotes(ctx context.Context, ids []string) (map[string]store.Quote, error)

	Search(ctx context.Context, q store.SearchQuery) (store.SearchHits, error)
	SearchAddresses(ctx context.Context, addrPrefix, labelPrefix string, n int) ([]store.AddressHit, error)
	SearchEntities(ctx context.Context, q string, limit, offset int) ([]attribution.Entity, error)
	SearchTwitter(ctx context.Context, q string, limit, offset int) ([]attribution.Entity, error)
	SearchTypes(ctx context.Context, q string, limit, offset int) ([]string, error)
	SearchTags(ctx context.Context, q string, limit, offset int) ([]store.TagHit, error)
	SearchTokens(ctx context.Context, q string, limit, offset int) ([]store.TokenHit, error)
	AddressTagsMany(ctx context.Context, keys []store.AddressKey) (map[store.AddressKey][]store.PopulatedTag, error)
	EntityTypes(ctx context.Context) ([]string, error)
	MissingEntities(ctx context.Context, ids []string) ([]string, error)
	ClusterActivity(ctx context.Context, id string, maxMembers int) (store.ClusterActivity, error)
	EntityUpdates(ctx context.Context, q store.UpdatesQuery) ([]store.EntityUpdate, error)
	AddressUpdates(ctx context.Context, q store.UpdatesQuery) ([]store.AddressUpdate, error)
	TagUpdates(ctx context.Context, q store.UpdatesQuery) ([]store.TagUpdate, error)
	AddressTagUpdates(ctx context.Context, q store.UpdatesQuery) ([]store.AddressTagUpdate, error)
	ChangeLogHead(ctx context.Context) (int64, error)

	RiskHops(ctx context.Context, chainType, root string, backward, forward []string, limit int, hubTransfers int64) (back, fwd []store.RiskEdge, err error)
	RiskFacts(ctx context.Context, chainType, root string, addrs []string, m store.RiskMapping) (store.RiskFacts, error)
	RiskEntityAddresses(ctx context.Context, id string, limit int) ([]store.AddressKey, error)
}

// UserLabels is the user-labels service as the app uses it.
type UserLabels interface {
	Lookup(ctx context.Context, addrs []ulclient.AddressRef) (ulclient.Lookup, error)
	Entity(ctx context.Context, id string) (ulclient.UserEntity, error)
	SharedEntity(ctx context.Context, id string) (ulclient.UserEntity, error)
	Search(ctx context.Context, query string, limit, offset int) (ulclient.SearchResult, error)
	// Additions are the caller's only_add additions to an operator entity, by chain type.
	Additions(ctx context.Context, operatorEntityID string) (map[string][]string, error)
}

// Activity is the transfers service's activity figures.
type Activity interface {
	Activity(ctx context.Context, addrs []transfersclient.AddressRef) (transfersclient.Activity, error)
}

// Balances is the balances service's USD totals (services/balances/client satisfies it).
type Balances interface {
	USDTotals(ctx context.Context, addrs []balclient.AddressRef, entities []string) (balclient.Totals, error)
}

// Service answers the intelligence API. It is safe for concurrent use.
type Service struct {
	Chains     *chains.Set
	Cache      *attribution.AttributionCache
	Store      Store
	UserLabels UserLabels // nil: no user labels
	Transfers  Activity   // nil: user-entity summaries unavailable
	Balances   Balances   // nil: summaries without balanceUsd, predictions by kept balances
	Market     MarketData // nil: tokens from the local copy of the registry and prices
	Log        *slog.Logger
	// ClusterMaxMembers is the most members a cluster summary covers (0:
	// DefaultClusterMaxMembers); a larger cluster's summary is refused (ClusterSummary).
	ClusterMaxMembers int
	// SearchPerCategory answers each search category with its own concurrent PostgreSQL
	// statement instead of entities from memory and the rest in one batch: the plan the
	// search benchmark prints beside the default, as its baseline.
	SearchPerCategory bool
	// RiskParallel is how many addresses one risk call scores at once (0: 1, one after another).
	RiskParallel int
	// Now is the clock risk scores' updated_at reads (nil: time.Now).
	Now func() time.Time
}

// MarketData is the owner of the token registry and prices (token-analytics). ok is false for
// a token it does not know or an id it refuses (the caller's input at fault); err is for the
// owner failing (unreachable, timing out, a 5xx), when the local registry answers instead.
type MarketData interface {
	TokenMarket(ctx context.Context, pricingID, chain, address string) (info TokenInfo, ok bool, err error)
}

// fromMarket asks the registry's owner first; when it fails, the local copy answers (and the
// failure is logged), so token pages stay up while token-analytics is down.
func (s *Service) fromMarket(ctx context.Context, id, chain, address string) (TokenInfo, bool) {
	if s.Market == nil {
		return TokenInfo{}, false
	}
	info, ok, err := s.Market.TokenMarket(ctx, id, chain, address)
	if err != nil {
		s.Log.WarnContext(ctx, "token-analytics unavailable; answering from the local registry", "error", err)
		return TokenInfo{}, false
	}
	return info, ok
}

// MaxBatch is the most addresses a batch lookup takes (the client package's, which callers and
// the edge's credit hold rely on).
const MaxBatch = client.MaxBatch

// Address answers one address on one chain.
func (s *Service) Address(ctx context.Context, t Target) (AddressInfo, error) {
	infos, err := s.infos(ctx, []Target{t})
	if err != nil {
		return AddressInfo{}, err
	}
	return infos[0], nil
}

// AddressAll answers the address on every chain where its format is valid, keyed by chain.
func (s *Service) AddressAll(ctx context.Context, ts []Target) (map[string]AddressInfo, error) {
	infos, err := s.infos(ctx, ts)
	if err != nil {
		return nil, err
	}
	out := make(map[string]AddressInfo, len(ts))
	for i, t := range ts {
		out[t.Chain] = infos[i]
	}
	return out, nil
}

// EnrichOptions say which optional parts an answer shows: the address's tags on its chain, its
// cluster ids and its predicted entity. The enriched lookups and the addresses change feed
// take them.
type EnrichOptions struct{ Tags, Clusters, Predictions bool }

// Enriched answers addresses with tags and clusters, keyed by chain.
func (s *Service) Enriched(ctx context.Context, ts []Target, o EnrichOptions) (map[string]AddressInfo, error) {
	infos, err := s.infos(ctx, ts)
	if err != nil {
		return nil, err
	}
	if err := s.enrich(ctx, ts, infos, o); err != nil {
		return nil, err
	}
	out := make(map[string]AddressInfo, len(ts))
	for i, t := range ts {
		out[t.Chain] = infos[i]
	}
	return out, nil
}

// Batch answers up to MaxBatch addresses, each on chain when given, else on the chain detected
// from its format (among only, when given), keyed by the address as given. An address valid on
// none of those chains is a 400 naming it.
func (s *Service) Batch(ctx context.Context, raw []string, chain string, only map[string]bool) (map[string]AddressInfo, error) {
	keys, ts, err := s.batchOnChain(raw, chain, only)
	if err != nil {
		return nil, err
	}
	infos, err := s.infos(ctx, ts)
	if err != nil {
		return nil, err
	}
	out := make(map[string]AddressInfo, len(ts))
	for i, k := range keys {
		out[k] = infos[i]
	}
	return out, nil
}

// infos builds the AddressInfo of each target: operator attribution from the cache, the
// caller's labels and entities from user-labels in one call. When user-labels fails for a
// caller, the answer is a user-labels outage (503): an answer without the caller's own labels
// would look complete and be wrong.
func (s *Service) infos(ctx context.Context, ts []Target) ([]AddressInfo, error) {
	keys := make([]string, len(ts))
	for i, t := range ts {
		keys[i] = t.Key()
	}
	known := s.Cache.Lookup(keys)
	out := make([]AddressInfo, len(ts))
	views := map[*attribution.Entity]*EntityView{} // one view per entity per answer
	view := func(e *attribution.Entity) *EntityView {
		if e == nil {
			return nil
		}
		v, ok := views[e]
		if !ok {
			v = entityView(e)
			views[e] = v
		}
		return v
	}
	for i, t := range ts {
		info := AddressInfo{Address: t.Address, Chain: t.Chain}
		if r := known[i]; r.Known {
			info.ServiceEntity = view(r.Entity)
			if r.Label != "" {
				info.ServiceLabel = &AddressLabel{Name: r.Label, Address: t.Address, ChainType: string(t.ChainType)}
			}
			info.PredictedEntity = view(r.Predicted)
			info.DepositServiceID = r.DepositServiceID
			info.Contract = r.IsContract
		}
		out[i] = info
	}
	if err := s.decorateUser(ctx, ts, keys, out); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Service) decorateUser(ctx context.Context, ts []Target, keys []string, out []AddressInfo) error {
	if s.UserLabels == nil {
		return nil
	}
	if _, ok := httpx.IdentityFrom(ctx); !ok {
		return nil
	}
	refs := make([]ulclient.AddressRef, 0, len(ts))
	seen := map[string]bool{}
	for i, t := range ts {
		if !seen[keys[i]] {
			seen[keys[i]] = true
			refs = append(refs, ulclient.AddressRef{ChainType: string(t.ChainType), Address: t.Address})
		}
	}
	lk, err := s.UserLabels.Lookup(ctx, refs)
	if err != nil {
		return unavailable("user-labels", err)
	}
	for i, t := range ts {
		if l, ok := lk.Labels[keys[i]]; ok {
			out[i].UserLabel = &AddressLabel{Name: l.Name, Address: t.Address, ChainType: string(t.ChainType)}
		}
		if es := lk.Entities[keys[i]]; len(es) > 0 {
			out[i].UserEntity = &EntityView{ID: es[0].ID, Name: es[0].Name, Note: es[0].Note, Type: "user"}
			out[i].IsUserAddress = true
		}
	}
	return nil
}

// Entity returns an operator entity with its tags, or the caller's user entity (UUID ids).
func (s *Service) Entity(ctx context.Context, id string) (EntityView, error) {
	if ulclient.IsUserEntityID(id) {
		ue, err := s.userEntity(ctx, canonicalUserEntityID(id), false)
		if err != nil {
			return EntityView{}, err
		}
		v := userEntityView(ue)
		tags := []PopulatedTag{}
		v.PopulatedTags = &tags
		return v, nil
	}
	e, err := s.operatorEntity(ctx, id)
	if err != nil {
		return EntityView{}, err
	}
	v := entityView(&e)
	v.Description = e.Description
	pt, err := s.Store.EntityTags(ctx, id)
	if err != nil {
		return EntityView{}, err
	}
	tags := populated(pt)
	v.PopulatedTags = &tags
	return *v, nil
}

func (s *Service) operatorEntity(ctx context.Context, id string) (attribution.Entity, error) {
	if !attribution.ValidEntityID(id) {
		return attribution.Entity{}, notFound("entity", "unknown entity %q", short(id))
	}
	e, err := s.Store.Entity(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return e, notFound("entity", "unknown entity %q", id)
	}
	return e, err
}

// userEntity returns the caller's user entity, or (when shared is allowed) a shareable one.
func (s *Service) userEntity(ctx context.Context, id string, shared bool) (ulclient.UserEntity, error) {
	if s.UserLabels == nil {
		return ulclient.UserEntity{}, notFound("entity", "unknown entity %q", id)
	}
	var ue ulclient.UserEntity
	err := ulclient.ErrNotFound
	if _, ok := httpx.IdentityFrom(ctx); ok {
		ue, err = s.UserLabels.Entity(ctx, id)
	}
	if errors.Is(err, ulclient.ErrNotFound) && shared {
		ue, err = s.UserLabels.SharedEntity(ctx, id)
	}
	if errors.Is(err, ulclient.ErrNotFound) {
		return ue, notFound("entity", "unknown entity %q", id)
	}
	if err != nil {
		return ue, unavailable("user-labels", err)
	}
	return ue, nil
}

// canonicalUserEntityID is a user entity id (a UUID) as user-labels stores and answers it, lower
// case, so a summary names the entity as /balances/entity and /user/entities do whatever case
// the caller wrote.
func canonicalUserEntityID(id string) string { return strings.ToLower(id) }

func userEntityView(ue ulclient.UserEntity) EntityView {
	addrs := ue.Addresses
	if addrs == nil {
		addrs = map[string][]string{}
	}
	shareable := ue.Shareable
	return EntityView{ID: ue.ID, Name: ue.Name, Note: ue.Note, Type: "user", Addresses: addrs, LinkShareable: &shareable}
}

// unavailable marks a failed call to svc as its outage, unless it already is one or the caller
// went away.
func unavailable(svc string, err error) error {
	if errors.Is(err, httpx.ErrUnavailable) || errors.Is(err, context.Canceled) {
		return err
	}
	return httpx.Unavailable(svc, err)
}

// EntitySummary returns an entity's figures: precomputed for operator entities, computed from
// user-labels and transfers for user entities. A shareable user entity is readable without a
// caller; anything else without one is a 401.
func (s *Service) EntitySummary(ctx context.Context, id string) (EntitySummary, error) {
	_, caller := httpx.IdentityFrom(ctx)
	// The edge lets this route through without a key for shareable user entities; anything
	// else needs one.
	if ulclient.IsUserEntityID(id) {
		return s.userEntitySummary(ctx, canonicalUserEntityID(id), caller)
	}
	if !caller {
		return EntitySummary{}, ErrUnauthenticated
	}
	if _, err := s.operatorEntity(ctx, id); err != nil {
		return EntitySummary{}, err
	}
	adds, err := s.additions(ctx, id)
	if err != nil {
		return EntitySummary{}, err
	}
	a, added, err := s.Store.EntityActivityWith(ctx, id, adds)
	if err != nil {
		return EntitySummary{}, err
	}
	sum := EntitySummary{EntityID: id, NumAddresses: a.NumAddresses, VolumeUSD: a.VolumeUSD}
	if s.Balances != nil {
		// As /balances/entity answers the caller: the entity's total plus its additions that
		// the entity does not hold already, each valued on its own.
		refs := make([]balclient.AddressRef, len(added))
		for i, k := range added {
			refs[i] = balclient.AddressRef{ChainType: k.ChainType, Address: k.Address}
		}
		tot, err := s.Balances.USDTotals(ctx, refs, []string{id})
		if err != nil {
			return EntitySummary{}, unavailable("balances", err)
		}
		sum.BalanceUSD = tot.Entities[id]
		for _, r := range refs {
			sum.BalanceUSD += tot.Addresses[r.Key()]
		}
	}
	if a.TransferCount > 0 {
		f, l := msTime(a.FirstMs), msTime(a.LastMs)
		sum.FirstTx, sum.LastTx = &f, &l
	}
	return sum, nil
}

// additions are the caller's only_add additions to operator entity id (user-labels), normalized,
// sorted and distinct; an address no configured chain type accepts is left out. A user-labels
// failure is its outage: a summary without the caller's additions would look complete and be
// wrong.
func (s *Service) additions(ctx context.Context, id string) ([]store.AddressKey, error) {
	if s.UserLabels == nil {
		return nil, nil
	}
	added, err := s.UserLabels.Additions(ctx, id)
	if err != nil {
		return nil, unavailable("user-labels", err)
	}
	return normalizedKeys(added), nil
}

// userEntitySummary computes a user entity's figures from its addresses' transfers and balances.
// Without a caller, an entity that is not shareable is ErrUnauthenticated.
func (s *Service) userEntitySummary(ctx context.Context, id string, caller bool) (EntitySummary, error) {
	ue, err := s.userEntity(ctx, id, true)
	if !caller && errors.Is(err, ErrNotFound) {
		return EntitySummary{}, ErrUnauthenticated
	}
	if err != nil {
		return EntitySummary{}, err
	}
	var refs []transfersclient.AddressRef
	for ct, list := range ue.Addresses {
		for _, a := range list {
			refs = append(refs, transfersclient.AddressRef{ChainType: ct, Address: a})
		}
	}
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].ChainType != refs[j].ChainType {
			return refs[i].ChainType < refs[j].ChainType
		}
		return refs[i].Address < refs[j].Address
	})
	sum := EntitySummary{EntityID: id, NumAddresses: int64(len(refs))}
	if len(refs) == 0 {
		return sum, nil
	}
	if s.Transfers == nil {
		return EntitySummary{}, httpx.Unavailable("transfers", errors.New("no transfers service configured"))
	}
	if len(refs) > transfersclient.MaxAddresses {
		refs = refs[:transfersclient.MaxAddresses]
	}
	act, err := s.Transfers.Activity(ctx, refs)
	if err != nil {
		return EntitySummary{}, unavailable("transfers", err)
	}
	sum.VolumeUSD = act.VolumeUSD
	if s.Balances != nil {
		brefs := make([]balclient.AddressRef, len(refs))
		for i, r := range refs {
			brefs[i] = balclient.AddressRef{ChainType: r.ChainType, Address: r.Address}
		}
		tot, err := s.Balances.USDTotals(ctx, brefs, nil)
		if err != nil {
			return EntitySummary{}, unavailable("balances", err)
		}
		sum.BalanceUSD = tot.TotalUSD
	}
	if act.FirstTx != nil {
		f := render.Timestamp(*act.FirstTx)
		sum.FirstTx = &f
	}
	if act.LastTx != nil {
		l := render.Timestamp(*act.LastTx)
		sum.LastTx = &l
	}
	return sum, nil
}

// msTime renders a Unix-millisecond time as /transfers does, fraction included (arbitrum_one
// and solana blocks are not whole seconds): a client feeding lastTx back as timeLte must not
// miss the transfer it names.
func msTime(ms int64) string { return render.Timestamp(time.UnixMilli(ms)) }

// MaxPredictions is the most addresses entity predictions return.
const MaxPredictions = 1000

// EntityPredictions returns the addresses predicted to belong to an operator entity, by USD
// balance (latest kept observations priced at the latest price), at most MaxPredictions.
func (s *Service) EntityPredictions(ctx context.Context, id string) ([]Prediction, error) {
	if _, err := s.operatorEntity(ctx, id); err != nil {
		return nil, err
	}
	hb, err := s.Store.PredictedBalances(ctx, id)
	if err != nil {
		return nil, err
	}
	if s.Balances != nil {
		return s.predictionsByBalances(ctx, id, hb)
	}
	// Pricing ids: the observation's, else the registry's for the token, else the chain's
	// native coin.
	pid := func(h store.HeldBalance) string {
		if h.TokenID != "" {
			return h.TokenID
		}
		if h.Token == "" {
			if c, ok := chains.Lookup(h.Chain); ok {
				return c.NativePricingID
			}
			return ""
		}
		id, err := s.Store.PricingIDByDeployment(ctx, h.Chain, h.Token)
		if err != nil {
			return ""
		}
		return id
	}
	ids := map[int]string{}
	var want []string
	for i, h := range hb {
		if h.Balance == nil {
			continue
		}
		if p := pid(h); p != "" {
			ids[i] = p
			want = append(want, p)
		}
	}
	quotes, err := s.Store.Quotes(ctx, want)
	if err != nil {
		return nil, err
	}
	usd := map[string]float64{}
	var order []string
	for i, h := range hb {
		if _, ok := usd[h.Address]; !ok {
			usd[h.Address] = 0
			order = append(order, h.Address)
		}
		if h.Balance == nil {
			continue
		}
		q, ok := quotes[ids[i]]
		if !ok {
			continue
		}
		usd[h.Address] += units(h.Balance, h.Decimals) * q.Price
	}
	out := make([]Prediction, 0, len(order))
	for _, a := range order {
		out = append(out, Prediction{Address: a, EntityID: id, USDBalance: usd[a]})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].USDBalance != out[j].USDBalance {
			return out[i].USDBalance > out[j].USDBalance
		}
		return out[i].Address < out[j].Address
	})
	if len(out) > MaxPredictions {
		out = out[:MaxPredictions]
	}
	return out, nil
}

// predictionsByBalances orders the predicted addresses by the balances service's USD value of
// their current balances.
func (s *Service) predictionsByBalances(ctx context.Context, id string, hb []store.HeldBalance) ([]Prediction, error) {
	seen := map[string]bool{}
	var refs []balclient.AddressRef
	for _, h := range hb {
		r := balclient.AddressRef{ChainType: h.ChainType, Address: h.Address}
		if !seen[r.Key()] {
			seen[r.Key()] = true
			refs = append(refs, r)
		}
	}
	tot, err := s.Balances.USDTotals(ctx, refs, nil)
	if err != nil {
		return nil, unavailable("balances", err)
	}
	out := make([]Prediction, 0, len(refs))
	for _, r := range refs {
		out = append(out, Prediction{Address: r.Address, EntityID: id, USDBalance: tot.Addresses[r.Key()]})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].USDBalance != out[j].USDBalance {
			return out[i].USDBalance > out[j].USDBalance
		}
		return out[i].Address < out[j].Address
	})
	if len(out) > MaxPredictions {
		out = out[:MaxPredictions]
	}
	return out, nil
}

func units(v *big.Int, decimals int) float64 {
	f, _ := new(big.Float).SetInt(v).Float64()
	return f / math.Pow10(decimals)
}

// Contract returns a contract's deployment facts.
func (s *Service) Contract(ctx context.Context, t Target) (ContractView, error) {
	c, err := s.Store.ContractByAddress(ctx, t.Chain, t.Address)
	if errors.Is(err, store.ErrNotFound) {
		return ContractView{}, notFound("contract", "no contract deployment known at %s on %s", t.Address, t.Chain)
	}
	if err != nil {
		return ContractView{}, err
	}
	v := ContractView{Address: t.Address, Chain: t.Chain, DeployTxHash: c.DeployTxHash, TransactionHash: c.DeployTxHash,
		BlockTimestamp: msTime(c.BlockTimeMs), BytecodeSize: c.BytecodeSize, Bytecode: c.Bytecode}
	if v.Deployer, err = s.addressOrNil(ctx, t, c.Deployer); err != nil {
		return ContractView{}, err
	}
	// The internal deployer is the address that executed the creation: the factory contract
	// for a creation inside a call, else the transaction's sender itself (the deployer). The
	// public shape requires the object; it is null only while the creation is unknown.
	v.InternalDeployer = v.Deployer
	if c.InternalDeployer != "" && c.InternalDeployer != c.Deployer {
		if v.InternalDeployer, err = s.addressOrNil(ctx, t, c.InternalDeployer); err != nil {
			return ContractView{}, err
		}
	}
	if c.CodeKnown {
		v.FunctionSighashes = c.FunctionSighashes
		if v.FunctionSighashes == nil {
			v.FunctionSighashes = []string{}
		}
	}
	if c.ProxyImplementation != "" {
		p := c.ProxyImplementation
		v.IsProxy, v.ProxyAddress = true, &p
	}
	if c.Token != nil {
		v.Token = &TokenRef{ID: render.NullString(c.Token.PricingID), Name: c.Token.Name, Symbol: c.Token.Symbol, Decimals: c.Token.Decimals}
	}
	return v, nil
}

// addressOrNil is the AddressInfo of addr on t's chain, nil for "".
func (s *Service) addressOrNil(ctx context.Context, t Target, addr string) (*AddressInfo, error) {
	if addr == "" {
		return nil, nil
	}
	dep := Target{Chain: t.Chain, ChainType: t.ChainType, Address: addr}
	if n, err := address.Normalize(t.ChainType, addr); err == nil {
		dep.Address = n
	}
	info, err := s.Address(ctx, dep)
	if err != nil {
		return nil, err
	}
	return &info, nil
}

// TokenByID returns a registry token by pricing id.
func (s *Service) TokenByID(ctx context.Context, id string) (TokenInfo, error) {
	if info, ok := s.fromMarket(ctx, id, "", ""); ok {
		return info, nil
	}
	mt, err := s.Store.MarketToken(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return TokenInfo{}, notFound("token", "unknown token %q", short(id))
	}
	if err != nil {
		return TokenInfo{}, err
	}
	return s.tokenInfo(ctx, mt, TokenIdentifier{PricingID: render.NullString(id)})
}

// TokenByAddress returns the token deployed at t: the registry entry when its pricing id is
// known, else the on-chain metadata alone (empty pricing id, no price).
func (s *Service) TokenByAddress(ctx context.Context, t Target) (TokenInfo, error) {
	if info, ok := s.fromMarket(ctx, "", t.Chain, t.Address); ok {
		return info, nil
	}
	id, err := s.Store.PricingIDByDeployment(ctx, t.Chain, t.Address)
	if err == nil {
		mt, err := s.Store.MarketToken(ctx, id)
		if err == nil {
			return s.tokenInfo(ctx, mt, TokenIdentifier{PricingID: render.NullString(id), Chain: t.Chain, Address: t.Address})
		}
		if !errors.Is(err, store.ErrNotFound) {
			return TokenInfo{}, err
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return TokenInfo{}, err
	}
	tok, err := s.Store.TokenByAddress(ctx, t.Chain, t.Address)
	if errors.Is(err, store.ErrNotFound) {
		return TokenInfo{}, notFound("token", "no token known at %s on %s", t.Address, t.Chain)
	}
	if err != nil {
		return TokenInfo{}, err
	}
	info := TokenInfo{Identifier: TokenIdentifier{PricingID: render.NullString(tok.PricingID), Chain: t.Chain, Address: t.Address},
		Name: tok.Name, Symbol: tok.Symbol, Deployments: []TokenDeployment{{Chain: t.Chain, Address: t.Address, Decimals: tok.Decimals}}}
	if tok.PricingID != "" {
		q, err := s.Store.Quotes(ctx, []string{tok.PricingID})
		if err != nil {
			return TokenInfo{}, err
		}
		info.Price, info.Price24hAgo = quoted(q, tok.PricingID)
	}
	return info, nil
}

// quoted is id's price and price 24 h ago from quotes, both nil (left out of the answer) when
// id has no price: an unpriced token is not worth $0.
func quoted(quotes map[string]store.Quote, id string) (price, ago *float64) {
	q, ok := quotes[id]
	if !ok {
		return nil, nil
	}
	return &q.Price, &q.Price24hAgo
}

func (s *Service) tokenInfo(ctx context.Context, mt store.MarketToken, id TokenIdentifier) (TokenInfo, error) {
	q, err := s.Store.Quotes(ctx, []string{mt.PricingID})
	if err != nil {
		return TokenInfo{}, err
	}
	info := TokenInfo{Identifier: id, Name: mt.Name, Symbol: mt.Symbol, Deployments: []TokenDeployment{}}
	info.Price, info.Price24hAgo = quoted(q, mt.PricingID)
	for _, d := range mt.Deployments {
		info.Deployments = append(info.Deployments, TokenDeployment{Chain: d.Chain, Address: d.Address, Decimals: d.Decimals})
	}
	return info, nil
}

// TagParams returns the populated variants of a tag, one per parameter value.
func (s *Service) TagParams(ctx context.Context, id string, limit, offset int) ([]PopulatedTag, error) {
	t, err := s.tag(ctx, id)
	if err != nil {
		return nil, err
	}
	ps, err := s.Store.TagParams(ctx, id, limit, offset)
	if err != nil {
		return nil, err
	}
	out := make([]PopulatedTag, len(ps))
	for i, p := range ps {
		out[i] = populatedTag(t, p)
	}
	return out, nil
}

// TagSummary counts what carries a tag.
func (s *Service) TagSummary(ctx context.Context, id string) (TagSummary, error) {
	if _, err := s.tag(ctx, id); err != nil {
		return TagSummary{}, err
	}
	ts, err := s.Store.TagSummary(ctx, id)
	if err != nil {
		return TagSummary{}, err
	}
	return TagSummary{TagID: id, NumAddresses: ts.Addresses, NumEntities: ts.Entities, NumUniqueTagParams: ts.Params}, nil
}

func (s *Service) tag(ctx context.Context, id string) (attribution.Tag, error) {
	if !attribution.ValidEntityID(id) {
		return attribution.Tag{}, notFound("tag", "unknown tag %q", short(id))
	}
	t, err := s.Store.Tag(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return t, notFound("tag", "unknown tag %q", id)
	}
	return t, err
}
