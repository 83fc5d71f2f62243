package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/render"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// ErrUnavailable is market data the service does not have yet (no Bitcoin price for the
// altcoin index, no balance of the native token yet).
var ErrUnavailable = errors.New("market data not available yet")

// Store is what the service reads.
type Store interface {
	Tokens(ctx context.Context, ids, chains []string) ([]Token, error)
	KnownIDs(ctx context.Context, ids []string) ([]string, error)
	PricingIDOf(ctx context.Context, chain, address string) (string, error)
	TopWindows(ctx context.Context, chains, ids []string, refFrom, curFrom, curTo time.Time) ([]TokenWindows, error)
	TopParts(ctx context.Context, chains []string, refFrom, curFrom, curTo time.Time) ([]TokenParts, error)
	// TopFlows sums the transfers from from on (exactly).
	TopFlows(ctx context.Context, deps []Deployment, from time.Time, limit int) ([]AddressFlow, error)
	// Volume sums the transfers from since on (exactly) into buckets of size up to to.
	Volume(ctx context.Context, deps []Deployment, since, to time.Time, size time.Duration) ([]VolumeBucket, error)
	TrendingIDs(ctx context.Context, chains []string, limit int) ([]string, error)
	Altcoins(ctx context.Context, exclude string, limit int) ([]AltcoinChange, error)
	PriceInForce(ctx context.Context, id string, t time.Time) (float64, bool, error)
	PricesInForce(ctx context.Context, ids []string, t time.Time) (map[string]float64, error)
	PriceExtremes(ctx context.Context, ids []string) (map[string]Extremes, error)
	ReserveSum(ctx context.Context, chain, token string, addresses []string) (string, error)
	PriceHistory(ctx context.Context, id string, g Granularity, from, to time.Time) ([]Quote, error)
	NetworkFigures(ctx context.Context, chains, pricingIDs []string) ([]NetworkFigures, error)
	// RecentPriceHistory and NewestPriceHistory answer oldest first.
	RecentPriceHistory(ctx context.Context, id string, from, to time.Time, limit int) ([]Quote, error)
	NewestPriceHistory(ctx context.Context, id string, g Granularity, limit int) ([]Quote, error)
	// MarketPrices is the prices in force at times (in their order) and the highest and lowest
	// point with from < time <= to, in one round trip.
	MarketPrices(ctx context.Context, id string, times []time.Time, from, to time.Time) (ago []*float64, high, low *float64, err error)
	FirstPriceTime(ctx context.Context, id string) (time.Time, error)
	// PriceWindow is each id's points with from <= time <= to, oldest first, one per time.
	PriceWindow(ctx context.Context, ids []string, from, to time.Time) (map[string][]WindowPoint, error)
}

// Quote is one point of a coin's price history (GET /networks/history/{chain}).
type Quote struct {
	Time      time.Time `json:"time"`
	USD       float64   `json:"usd"`
	Volume24h float64   `json:"volume24h"`
	MarketCap float64   `json:"marketCap"`
}

// NetworkHistoryDays is the window of GET /networks/history/{chain}: a year of daily points.
const NetworkHistoryDays = 365

// NetworkHistory is the daily price, 24-hour volume and market cap of a chain's native coin
// (pricingID) over the last NetworkHistoryDays days, oldest first; an empty list when no price
// has been ingested for it.
func (s *Service) NetworkHistory(ctx context.Context, pricingID string) ([]Quote, error) {
	now := s.o.Now().UTC()
	return s.st.PriceHistory(ctx, pricingID, Daily, now.Add(-NetworkHistoryDays*24*time.Hour), now)
}

// UserLabels is what the service asks user-labels: the caller's own labels and entities of
// addresses (services/user-labels/client satisfies it; it answers nothing without a caller).
type UserLabels interface {
	Lookup(ctx context.Context, addrs []ulclient.AddressRef) (ulclient.Lookup, error)
}

// Native is the operator's own token for /native/circulating.
type Native struct {
	Chain       string
	Token       string   // contract ("" for a chain's native coin)
	Decimals    int32    // of the token
	TotalSupply string   // exact, smallest unit, base 10
	Reserves    []string // non-circulating addresses
}

// Configured reports whether the native token is set.
func (n Native) Configured() bool { return n.Chain != "" && n.TotalSupply != "" }

// Options configure a Service.
type Options struct {
	Chains []string // the deployment's chains; empty means all
	Native Native
	// Exchange is the operator's exchange's tokens (/token/service_exchange_tokens).
	Exchange Exchange
	Now      func() time.Time
	// Bitcoin is the pricing id the altcoin index compares against; default "bitcoin".
	Bitcoin string
	// TopRefresh, when positive, keeps the unfiltered /token/top figures in memory, refreshed
	// this often (RefreshTopLoop): answers are then up to twice this old.
	TopRefresh time.Duration
	// UserLabels, when set, adds the caller's own labels and entities to top_flow's addresses.
	UserLabels UserLabels
	Logger     *slog.Logger
}

// Service answers the public queries. It is safe for concurrent use.
type Service struct {
	st Store
	o  Options

	imported atomic.Bool // the imports at start are done (MarkImported)

	topMu sync.RWMutex
	top   map[topKey]*topSnapshot
}

// New returns a service over st.
func New(st Store, o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Bitcoin == "" {
		o.Bitcoin = "bitcoin"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Service{st: st, o: o, top: map[topKey]*topSnapshot{}}
}

// MinFlowRetention is the shortest flow retention the routes allow: top_flow and volume reach
// 365 days back, volume's weekly buckets up to a week more, and the horizon is a day's start.
const MinFlowRetention = (365 + 7 + 1) * 24 * time.Hour

// Limits of the public queries.
const (
	AltcoinCount   = 50
	AltcoinPeriod  = 90 * 24 * time.Hour
	TrendingLimit  = 100
	MaxVolumePoint = 2000
)

// TokenRef names a token: a pricing id, or a chain and contract.
type TokenRef struct {
	PricingID      string
	Chain, Address string
}

func (r TokenRef) String() string {
	if r.PricingID != "" {
		return r.PricingID
	}
	return r.Chain + "/" + r.Address
}

// chainsOr is requested narrowed to the configured chains (requested is already validated).
func (s *Service) chainsOr(requested []string) []string {
	if len(requested) > 0 {
		return requested
	}
	return s.o.Chains
}

// deployments resolves a token to the deployments its flows are summed over.
func (s *Service) deployments(ctx context.Context, ref TokenRef, chains []string) (Token, []Deployment, error) {
	id := ref.PricingID
	if id == "" {
		var err error
		if id, err = s.st.PricingIDOf(ctx, ref.Chain, ref.Address); err != nil {
			return Token{}, nil, fmt.Errorf("token %s: %w", ref, err)
		}
	}
	ts, err := s.st.Tokens(ctx, []string{id}, s.chainsOr(chains))
	if err != nil {
		return Token{}, nil, err
	}
	if len(ts) == 0 {
		return Token{}, nil, fmt.Errorf("token %s: %w", ref, ErrNotFound)
	}
	t := ts[0]
	if ref.PricingID == "" {
		for _, d := range t.Deployments {
			if d.Chain == ref.Chain && d.Address == ref.Address {
				return t, []Deployment{d}, nil
			}
		}
		// The contract exists (PricingIDOf found it) on a chain the chains filter leaves out:
		// nothing of it is asked for, as a pricing id whose deployments the filter leaves out.
		if len(chains) > 0 && !slices.Contains(chains, ref.Chain) {
			return t, nil, nil
		}
		return Token{}, nil, fmt.Errorf("token %s: %w", ref, ErrNotFound)
	}
	return t, t.Deployments, nil
}

// TopFlows returns the addresses with the most flow of a token over the last window: the
// transfers from exactly now - window on (the store reads the window's first, partial hour from
// the transfers themselves, not its hour's rollups).
func (s *Service) TopFlows(ctx context.Context, ref TokenRef, chains []string, window time.Duration, limit int) ([]TopFlow, error) {
	_, deps, err := s.deployments(ctx, ref, chains)
	if err != nil {
		return nil, err
	}
	out := []TopFlow{}
	if len(deps) == 0 {
		return out, nil
	}
	fs, err := s.st.TopFlows(ctx, deps, s.o.Now().Add(-window), limit)
	if err != nil {
		return nil, err
	}
	labels, err := s.callerLabels(ctx, fs)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		ai := addressInfo(f)
		labels.Apply(&ai, chainTypeOf(f.Chain))
		out = append(out, TopFlow{Address: ai, InUSD: f.InUSD, InValue: f.InValue, OutUSD: f.OutUSD, OutValue: f.OutValue})
	}
	return out, nil
}

// callerLabels asks user-labels, once, for the caller's labels and entities of the flows'
// distinct addresses (none without a user-labels client or a caller).
func (s *Service) callerLabels(ctx context.Context, fs []AddressFlow) (ulclient.Lookup, error) {
	if s.o.UserLabels == nil || len(fs) == 0 {
		return ulclient.Lookup{}, nil
	}
	seen := map[ulclient.AddressRef]bool{}
	var refs []ulclient.AddressRef
	for _, f := range fs {
		r := ulclient.AddressRef{ChainType: chainTypeOf(f.Chain), Address: f.Address}
		if !seen[r] {
			seen[r] = true
			refs = append(refs, r)
		}
	}
	l, err := s.o.UserLabels.Lookup(ctx, refs)
	if err != nil {
		return ulclient.Lookup{}, fmt.Errorf("caller labels: %w", err)
	}
	return l, nil
}

func addressInfo(f AddressFlow) AddressInfo {
	var at *render.Attribution
	if a := f.Attribution; a != nil {
		at = &render.Attribution{Entity: a.Entity, Label: a.Label, Predicted: a.PredictedEntity,
			DepositServiceID: a.DepositServiceID, IsContract: a.Contract}
	}
	return render.Info(f.Chain, chainTypeOf(f.Chain), f.Address, false, at)
}

// Volume returns a token's transfer volume in buckets of size over the last window, oldest
// first, every bucket present. The buckets run from the one holding now - window to the one
// holding now, and count exactly the transfers of [now - window, now]: the first bucket (shown
// at its start, as every bucket) only those from now - window on, as the last only those up to
// now, so the series sums to the window's volume, what /transfers lists over timeLast. A transfer
// moves value out of one address into another, so each bucket's in and out are both the
// bucket's volume.
func (s *Service) Volume(ctx context.Context, ref TokenRef, size, window time.Duration) ([]VolumePoint, error) {
	_, deps, err := s.deployments(ctx, ref, nil)
	if err != nil {
		return nil, err
	}
	now := s.o.Now().UTC()
	from, to := volumeSpan(now, size, window)
	var bs []VolumeBucket
	if len(deps) > 0 {
		if bs, err = s.st.Volume(ctx, deps, now.Add(-window), to, size); err != nil {
			return nil, err
		}
	}
	// residues read as zero (Settle) against the volume of every bucket asked for; a bucket
	// where no transfer counts has none
	var refUSD, refValue float64
	for _, b := range bs {
		refUSD, refValue = refUSD+math.Abs(b.USD), refValue+math.Abs(b.Value)
	}
	out := []VolumePoint{}
	i := 0
	for t := from; t.Before(to); t = t.Add(size) {
		p := VolumePoint{Time: t}
		if i < len(bs) && bs[i].Time.Equal(t) {
			if bs[i].Transfers > 0 {
				usd, value := Settle(bs[i].USD, refUSD), Settle(bs[i].Value, refValue)
				p.InUSD, p.InValue, p.OutUSD, p.OutValue = usd, value, usd, value
			}
			i++
		}
		out = append(out, p)
	}
	return out, nil
}

// volumeOrigin is a Monday 00:00 UTC: buckets are aligned to it, so days start at 00:00 UTC and
// weekly buckets on Mondays.
var volumeOrigin = time.Date(2000, 1, 3, 0, 0, 0, 0, time.UTC)

// volumeSpan returns the start of the first bucket of size and the end of the last one of a
// window ending at now: the first bucket holds now - window, the last holds now.
func volumeSpan(now time.Time, size, window time.Duration) (from, to time.Time) {
	bucket := func(t time.Time) time.Time { return volumeOrigin.Add(t.Sub(volumeOrigin) / size * size) }
	return bucket(now.Add(-window)), bucket(now).Add(size)
}

// Trending returns the priced tokens with the most 24 h volume.
func (s *Service) Trending(ctx context.Context) ([]TrendingToken, error) {
	ids, err := s.st.TrendingIDs(ctx, s.o.Chains, TrendingLimit)
	if err != nil {
		return nil, err
	}
	return s.trending(ctx, ids)
}

// TrendingToken returns one token's trending figures. A registry entry without a price is not
// trending (the list leaves it out too) and has no figures to show: every required field of a
// TrendingToken is a price or derived from one, so it is not found rather than shown at $0.
func (s *Service) TrendingToken(ctx context.Context, id string) (TrendingToken, error) {
	ts, err := s.trending(ctx, []string{id})
	if err != nil {
		return TrendingToken{}, err
	}
	if len(ts) == 0 {
		return TrendingToken{}, fmt.Errorf("token %s: %w", id, ErrNotFound)
	}
	t := ts[0]
	if t.Price == nil {
		return TrendingToken{}, fmt.Errorf("token %s has no price, so it is not trending (%w)", id, ErrNotFound)
	}
	// The single token's shape requires these as numbers (the list's allows null): 0 says none
	// is known, as docs/token-analytics.md states.
	zero := 0.0
	if t.Price24hAgo == nil {
		t.Price24hAgo = &zero
	}
	if t.Volume24h == nil {
		t.Volume24h = &zero
	}
	return t, nil
}

// Extremes are the highest and lowest price of a token's stored history.
type Extremes struct{ High, Low float64 }

// trending returns the trending figures of the registry entries of ids, in the order of ids
// (unknown ids are left out). What the registry lacks (no price API fills it) is derived from
// the stored history: the all-time high and low from its extremes (kept by the price writes,
// one lookup per token) and the current price, the circulating supply from the market cap and
// the price of the newest quote. The 24 h volume is the newest quote's (AddPrices records a
// history point's total_volume as such). Every token's figures are read in one statement per
// kind, not one per token.
func (s *Service) trending(ctx context.Context, ids []string) ([]TrendingToken, error) {
	ts, err := s.st.Tokens(ctx, ids, s.o.Chains)
	if err != nil {
		return nil, err
	}
	byID := map[string]Token{}
	var lacking []string
	for _, t := range ts {
		byID[t.PricingID] = t
		if t.AllTimeHigh == nil || t.AllTimeLow == nil {
			lacking = append(lacking, t.PricingID)
		}
	}
	ext, err := s.st.PriceExtremes(ctx, lacking)
	if err != nil {
		return nil, err
	}
	ago, err := s.st.PricesInForce(ctx, present(ids, byID), s.o.Now().Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	out := make([]TrendingToken, 0, len(ids))
	for _, id := range ids {
		t, ok := byID[id]
		if !ok {
			continue
		}
		tt := trendingOf(t, ext)
		if p, ok := ago[id]; ok {
			tt.Price24hAgo = &p
		}
		out = append(out, tt)
	}
	return out, nil
}

// present is ids without those byID lacks.
func present[T any](ids []string, byID map[string]T) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if _, ok := byID[id]; ok {
			out = append(out, id)
		}
	}
	return out
}

// trendingOf composes a token's figures; what is unknown stays nil (null), never 0. The
// all-time high and low come from the registry, else from the stored history's extremes, and
// are widened to the current price: the price now is a price the token had, so no high below it
// (a registry figure older than the latest quote) or low above it is shown.
func trendingOf(t Token, ext map[string]Extremes) TrendingToken {
	tt := TrendingToken{Name: t.Name, Symbol: t.Symbol, PricingID: t.PricingID, Price: t.Price,
		Volume24h: t.Volume24h, AllTimeHigh: t.AllTimeHigh, AllTimeLow: t.AllTimeLow,
		CirculatingSupply: t.CirculatingSupply, TotalSupply: t.TotalSupply}
	if e, ok := ext[t.PricingID]; ok {
		if tt.AllTimeHigh == nil {
			tt.AllTimeHigh = &e.High
		}
		if tt.AllTimeLow == nil {
			tt.AllTimeLow = &e.Low
		}
	}
	if t.Price != nil {
		p := *t.Price
		tt.AllTimeHigh, tt.AllTimeLow = widen(tt.AllTimeHigh, p, true), widen(tt.AllTimeLow, p, false)
	}
	if tt.CirculatingSupply == nil && t.MarketCap != nil && t.Price != nil && *t.Price > 0 {
		c := *t.MarketCap / *t.Price
		tt.CirculatingSupply = &c
	}
	return tt
}

// widen is max(*x, p) (high) or min(*x, p), or p when x is unknown, as a new pointer (x may be
// the registry's).
func widen(x *float64, p float64, high bool) *float64 {
	v := p
	switch {
	case x != nil && high:
		v = max(*x, p)
	case x != nil:
		v = min(*x, p)
	}
	return &v
}

// priceAt is the price in force at t: the newest point of any granularity at or before t (an
// older hourly point does not win over a newer daily one).
func (s *Service) priceAt(ctx context.Context, id string, t time.Time) (float64, bool, error) {
	return s.st.PriceInForce(ctx, id, t)
}

// AltcoinIndex counts how many of the AltcoinCount largest altcoins (neither stablecoins nor
// wrapped or bridged copies of another coin, TokenUpdate.Wrapped) gained more
// (or lost less) than Bitcoin over the last AltcoinPeriod. An altcoin without a price that old
// does not count as beating it.
func (s *Service) AltcoinIndex(ctx context.Context) (int, error) {
	then := s.o.Now().Add(-AltcoinPeriod)
	btc, err := s.st.Tokens(ctx, []string{s.o.Bitcoin}, nil)
	if err != nil {
		return 0, err
	}
	if len(btc) == 0 || btc[0].Price == nil {
		return 0, fmt.Errorf("%s price: %w", s.o.Bitcoin, ErrUnavailable)
	}
	btcThen, ok, err := s.priceAt(ctx, s.o.Bitcoin, then)
	if err != nil {
		return 0, err
	}
	if !ok || btcThen <= 0 {
		return 0, fmt.Errorf("%s price 90 days ago: %w", s.o.Bitcoin, ErrUnavailable)
	}
	btcChange := *btc[0].Price/btcThen - 1
	alts, err := s.st.Altcoins(ctx, s.o.Bitcoin, AltcoinCount)
	if err != nil {
		return 0, err
	}
	ids := make([]string, len(alts))
	for i, a := range alts {
		ids[i] = a.PricingID
	}
	before, err := s.st.PricesInForce(ctx, ids, then)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range alts {
		if b := before[a.PricingID]; b > 0 && a.Now/b-1 > btcChange {
			n++
		}
	}
	return n, nil
}

// Circulating is the native token's total supply minus its non-circulating addresses'
// balances, in token units.
func (s *Service) Circulating(ctx context.Context) (float64, error) {
	n := s.o.Native
	if !n.Configured() {
		return 0, fmt.Errorf("native token: %w", ErrNotConfigured)
	}
	total, ok := new(big.Int).SetString(n.TotalSupply, 10)
	if !ok {
		return 0, fmt.Errorf("native total supply %q is not an integer", n.TotalSupply)
	}
	held := new(big.Int)
	if len(n.Reserves) > 0 {
		sum, err := s.st.ReserveSum(ctx, n.Chain, n.Token, n.Reserves)
		if err != nil {
			return 0, err
		}
		if _, ok := held.SetString(sum, 10); !ok {
			return 0, fmt.Errorf("reserve sum %q is not an integer", sum)
		}
	}
	circ := new(big.Float).SetInt(total.Sub(total, held))
	scale := new(big.Float).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n.Decimals)), nil))
	f, _ := circ.Quo(circ, scale).Float64()
	return f, nil
}

// KnownIDs returns the pricing ids among ids the registry holds, sorted (one statement, for
// callers that only check existence, such as transfers' tokens filter).
func (s *Service) KnownIDs(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return []string{}, nil
	}
	known, err := s.st.KnownIDs(ctx, ids)
	if known == nil && err == nil {
		known = []string{}
	}
	return known, err
}

// Market returns what /intelligence/token shows of a token.
func (s *Service) Market(ctx context.Context, ref TokenRef) (TokenMarket, error) {
	t, _, err := s.deployments(ctx, ref, nil)
	if err != nil {
		return TokenMarket{}, err
	}
	m := TokenMarket{Identifier: TokenIdentifier{PricingID: t.PricingID, Chain: ref.Chain, Address: ref.Address},
		Name: t.Name, Symbol: t.Symbol, Price: t.Price, Deployments: t.Deployments}
	if m.Deployments == nil {
		m.Deployments = []Deployment{}
	}
	if p, ok, err := s.priceAt(ctx, t.PricingID, s.o.Now().Add(-24*time.Hour)); err != nil {
		return TokenMarket{}, err
	} else if ok {
		m.Price24hAgo = &p
	}
	return m, nil
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// chainTypeOf is the chain type of a chain name ("evm" for the EVM chains).
func chainTypeOf(chain string) string {
	if c, ok := chains.Lookup(chain); ok {
		return string(c.Type)
	}
	return chain
}
