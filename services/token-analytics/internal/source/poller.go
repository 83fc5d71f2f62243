package source

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// PriceStore is what the poller reads and writes.
type PriceStore interface {
	PollIDs(ctx context.Context, chains []string, limit int) ([]string, error)
	UpsertTokens(ctx context.Context, us []app.TokenUpdate) error
	AddPrices(ctx context.Context, ps []app.PricePoint) (int, error)
	LatestPriceTime(ctx context.Context, id string, g app.Granularity) (time.Time, error)
}

// Lease is what lets one replica of a deployment poll at a time (a store.Lease).
type Lease interface {
	// Take takes or renews the lease; false: another replica holds it.
	Take(ctx context.Context) (bool, error)
	// Release ends the lease if this replica holds it.
	Release(ctx context.Context) error
}

// ErrNotHolder is what Cycle returns when another replica holds the lease (at the start, or
// taken over during a long cycle): this replica does not poll.
var ErrNotHolder = errors.New("another replica holds the price poller's lease")

// PollerOptions configure a Poller.
type PollerOptions struct {
	Interval    time.Duration // between cycles; default 5m
	History     time.Duration // how far back a history without points starts; default 90 days
	MaxIDs      int           // pricing ids polled; default 250
	Chains      []string      // poll tokens deployed on these; empty: all
	Stablecoins []string
	// WrappedCategories are the API's categories of wrapped and bridged copies of other coins
	// (CoinGecko: "wrapped-tokens"); a polled id in one is flagged Wrapped, the others are not.
	WrappedCategories []string
	Now               func() time.Time
	Logger            *slog.Logger
	// Polled, if set, is told how each cycle ended (nil: every polled id is current); a cycle
	// its context ended is not told.
	Polled func(ctx context.Context, err error)
	// Quoted, if set, is told the newest quote time each cycle stored.
	Quoted func(t time.Time)
	// Lease, if set, is taken before each cycle and renewed before each request of it, so one
	// replica polls at a time and the API key's budget is the deployment's (nil: always poll).
	Lease Lease
	// Holding, if set, is told after each try at the lease whether this replica holds it.
	Holding func(bool)
}

// Poller keeps the registry's quotes and every polled pricing id's hourly and daily history
// current from a CoinGecko-compatible API.
type Poller struct {
	api *Client
	st  PriceStore
	o   PollerOptions
	// holding is whether the last try at the lease took it (for logging changes).
	holding bool
}

// ChunkSpan is the longest range asked at once: the API answers hourly points up to 90 days.
const ChunkSpan = 89 * 24 * time.Hour

// NewPoller returns a poller.
func NewPoller(api *Client, st PriceStore, o PollerOptions) *Poller {
	if o.Interval <= 0 {
		o.Interval = 5 * time.Minute
	}
	if o.History <= 0 {
		o.History = 90 * 24 * time.Hour
	}
	if o.MaxIDs <= 0 {
		o.MaxIDs = 250
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Poller{api: api, st: st, o: o}
}

// Run polls every Interval until ctx ends; a failed cycle is logged and the next one resumes
// where the stored history ends. A cycle another replica's lease skips is neither logged as a
// failure nor told to Polled; the lease is released when ctx ends.
func (p *Poller) Run(ctx context.Context) error {
	if p.o.Lease != nil {
		defer p.release(ctx)
	}
	for {
		err := p.Cycle(ctx)
		skipped := errors.Is(err, ErrNotHolder)
		if err != nil && !skipped && ctx.Err() == nil {
			p.o.Logger.WarnContext(ctx, "price poll failed; the next cycle resumes", "error", err)
		}
		if p.o.Polled != nil && !skipped && ctx.Err() == nil {
			p.o.Polled(ctx, err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(p.o.Interval):
		}
	}
}

// release ends the lease when Run stops, so another replica polls at its next interval rather
// than after the lease's ttl.
func (p *Poller) release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := p.o.Lease.Release(ctx); err != nil {
		p.o.Logger.WarnContext(ctx, "releasing the price poller's lease failed; another replica takes it when it expires", "error", err)
	}
}

// renew takes or renews the lease (without one, this replica always polls): ErrNotHolder when
// another replica holds it. Changes of holder are logged.
func (p *Poller) renew(ctx context.Context) error {
	if p.o.Lease == nil {
		return nil
	}
	ok, err := p.o.Lease.Take(ctx)
	if err != nil {
		return err
	}
	if ok != p.holding {
		if ok {
			p.o.Logger.InfoContext(ctx, "this replica polls the price API (it holds the poller's lease)")
		} else {
			p.o.Logger.InfoContext(ctx, "another replica polls the price API (it holds the poller's lease); this one waits")
		}
		p.holding = ok
	}
	if p.o.Holding != nil {
		p.o.Holding(ok)
	}
	if !ok {
		return ErrNotHolder
	}
	return nil
}

// Cycle refreshes the quotes of the polled pricing ids, then fetches each one's history from
// its newest stored hour to the last complete hour. It stops at the first failure, and with
// ErrNotHolder when the lease is another replica's (before it starts, or before a request).
func (p *Poller) Cycle(ctx context.Context) error {
	if err := p.renew(ctx); err != nil {
		return err
	}
	ids, err := p.st.PollIDs(ctx, p.o.Chains, p.o.MaxIDs)
	if err != nil {
		return err
	}
	wrapped, err := p.wrapped(ctx)
	if err != nil {
		return err
	}
	for start := 0; start < len(ids); start += MaxMarketIDs {
		if start > 0 { // the first chunk's request follows the renewal above
			if err := p.renew(ctx); err != nil {
				return err
			}
		}
		if err := p.quotes(ctx, ids[start:min(start+MaxMarketIDs, len(ids))], wrapped); err != nil {
			return err
		}
	}
	for _, id := range ids {
		err := p.History(ctx, id)
		if errors.Is(err, errPermanent) {
			// The API does not know this coin (or refuses it): the others go on.
			p.o.Logger.DebugContext(ctx, "price history refused", "pricing_id", id, "error", err)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// wrapped is the set of pricing ids in the wrapped categories (nil without categories, or when
// the API refuses one, as an API without categories does: the flags then stay as stored).
func (p *Poller) wrapped(ctx context.Context) (map[string]bool, error) {
	if len(p.o.WrappedCategories) == 0 {
		return nil, nil
	}
	in := map[string]bool{}
	for _, c := range p.o.WrappedCategories {
		ids, err := p.api.CategoryIDs(ctx, c)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			// A flag the altcoin index reads must not hold up pricing: the cycle goes on and the
			// flags stay as stored until a cycle reads the category.
			p.o.Logger.WarnContext(ctx, "reading a wrapped-token category failed; wrapped flags left as stored", "category", c, "error", err)
			return nil, nil
		}
		for _, id := range ids {
			in[id] = true
		}
	}
	return in, nil
}

func (p *Poller) quotes(ctx context.Context, ids []string, wrapped map[string]bool) error {
	ms, err := p.api.Markets(ctx, ids)
	if err != nil {
		return err
	}
	var us []app.TokenUpdate
	var ticks []app.PricePoint
	for _, m := range ms {
		if !slices.Contains(ids, m.ID) {
			continue
		}
		u := app.TokenUpdate{PricingID: m.ID, Name: m.Name, CirculatingSupply: m.CirculatingSupply,
			TotalSupply: m.TotalSupply, MarketCap: m.MarketCap, AllTimeHigh: m.ATH, AllTimeLow: m.ATL, Volume24h: m.TotalVolume}
		if wrapped != nil {
			w := wrapped[m.ID]
			u.Wrapped = &w
		}
		us = append(us, u)
		if m.CurrentPrice != nil && *m.CurrentPrice > 0 {
			at, err := time.Parse(time.RFC3339, m.LastUpdated)
			if err != nil {
				at = p.o.Now()
			}
			ticks = append(ticks, app.PricePoint{PricingID: m.ID, Granularity: app.Tick, Time: at.UTC(), Price: *m.CurrentPrice,
				MarketCap: m.MarketCap, Volume: m.TotalVolume})
		}
	}
	if err := p.st.UpsertTokens(ctx, Flag(us, p.o.Stablecoins)); err != nil {
		return err
	}
	if _, err := p.st.AddPrices(ctx, ticks); err != nil {
		return err
	}
	if p.o.Quoted != nil && len(ticks) > 0 {
		p.o.Quoted(slices.MaxFunc(ticks, func(a, b app.PricePoint) int { return a.Time.Compare(b.Time) }).Time)
	}
	return nil
}

// History fetches id's hourly points (and the daily ones, the 00:00 hour's) after its newest
// stored hour up to the last complete hour, in ranges of ChunkSpan, storing each range before
// asking the next, so a failure loses nothing and the next call resumes after the last stored
// hour.
func (p *Poller) History(ctx context.Context, id string) error {
	last, err := p.st.LatestPriceTime(ctx, id, app.Hourly)
	if err != nil {
		return err
	}
	end := p.o.Now().UTC().Truncate(time.Hour)
	from := end.Add(-p.o.History)
	if !last.IsZero() && !last.Before(from) {
		from = last.Add(time.Hour)
	}
	for from.Before(end) {
		to := from.Add(ChunkSpan)
		if to.After(end) {
			to = end
		}
		// A cycle over many ids outlasts the lease's ttl: it is renewed before each range, and
		// a replica that took it over meanwhile polls from here on.
		if err := p.renew(ctx); err != nil {
			return err
		}
		ch, err := p.api.Range(ctx, id, from, to)
		if err != nil {
			return err
		}
		if _, err := p.st.AddPrices(ctx, ChartPoints(id, ch, from, to)); err != nil {
			return err
		}
		from = to
	}
	return nil
}

// ChartPoints turns a chart into hourly points in [from, to): the first point of each hour, at
// the hour, with the market cap and volume of the same instant; the 00:00 hour's point is also
// the day's daily point.
func ChartPoints(id string, ch Chart, from, to time.Time) []app.PricePoint {
	caps := pairMap(ch.MarketCaps)
	vols := pairMap(ch.TotalVolumes)
	seen := map[time.Time]bool{}
	var out []app.PricePoint
	for _, pr := range ch.Prices {
		ms := int64(pr[0])
		t := time.UnixMilli(ms).UTC()
		h := t.Truncate(time.Hour)
		if h.Before(from) || !h.Before(to) || seen[h] || pr[1] <= 0 {
			continue
		}
		seen[h] = true
		p := app.PricePoint{PricingID: id, Granularity: app.Hourly, Time: h, Price: pr[1], MarketCap: caps[ms], Volume: vols[ms]}
		out = append(out, p)
		if h.Truncate(24 * time.Hour).Equal(h) {
			d := p
			d.Granularity = app.Daily
			out = append(out, d)
		}
	}
	return out
}

func pairMap(ps [][2]float64) map[int64]*float64 {
	m := make(map[int64]*float64, len(ps))
	for _, p := range ps {
		v := p[1]
		if v > 0 {
			m[int64(p[0])] = &v
		}
	}
	return m
}
