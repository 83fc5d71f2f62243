package app

import (
	"context"

	intelclient "github.com/chainintel/chainintel/services/intelligence/client"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// Tags is what the app asks intelligence (services/intelligence/client satisfies it): the tag ids each
// address carries on chain, keyed by address; addresses without tags may be absent.
type Tags interface {
	Tags(ctx context.Context, chain string, addrs []string) (map[string][]string, error)
}

// Option configures an App at construction.
type Option func(*App)

// WithTags makes /counterparties' tags filter ask t. Without it a tags filter is a 400: the
// tags live in intelligence and this service's read model holds none.
func WithTags(t Tags) Option { return func(a *App) { a.tags = t } }

// maxTagRead is the deepest a tags filter reads a chain's ranking: a rare tag on a busy subject
// would otherwise read (and ask intelligence about) every counterparty it has.
const maxTagRead = 16384

// taggedCounterparties returns, per chain, the first f.Limit counterparties by USD (the store's
// order) whose address carries one of tags. The store ranks counterparties; only intelligence
// knows their tags, so the ranking is read for more counterparties than the limit (four times,
// at least 256) and their tags asked in that order, a chain at a time, until each chain has
// f.Limit matches; a chain that has fewer while the store read as many as were asked for is
// read again four times deeper (the tags already asked are kept), until the store has no more or
// maxTagRead counterparties were read.
func (a *App) taggedCounterparties(ctx context.Context, f store.CounterpartyFilter, tags []string) ([]store.Counterparty, error) {
	if a.tags == nil {
		return nil, &InvalidInputError{Field: "tags", Reason: "needs the intelligence service, which this deployment does not configure"}
	}
	want := map[string]bool{}
	for _, t := range tags {
		want[t] = true
	}
	limit := f.Limit
	tagged := map[addrRef]bool{} // the counterparties asked about: whether they carry one of tags
	for read := max(4*limit, 256); ; read = min(4*read, max(maxTagRead, 4*limit)) {
		f.Limit = read
		cps, err := a.store.Counterparties(ctx, f)
		if err != nil {
			return nil, err
		}
		var chainOrder []string
		byChain := map[string][]store.Counterparty{}
		for _, c := range cps {
			if _, ok := byChain[c.Chain]; !ok {
				chainOrder = append(chainOrder, c.Chain)
			}
			byChain[c.Chain] = append(byChain[c.Chain], c)
		}
		var out []store.Counterparty
		deeper := false
		for _, chain := range chainOrder {
			got, err := a.matchTags(ctx, chain, byChain[chain], want, tagged, limit)
			if err != nil {
				return nil, err
			}
			out = append(out, got...)
			if len(got) < limit && len(byChain[chain]) == read {
				deeper = true // the chain may have more counterparties than were read
			}
		}
		if !deeper || read >= maxTagRead {
			return out, nil
		}
	}
}

// matchTags returns the first limit of cands (one chain's, in rank order) whose address carries
// one of want, asking intelligence about those tagged does not hold yet, a batch at a time and
// only as far as the limit needs.
func (a *App) matchTags(ctx context.Context, chain string, cands []store.Counterparty, want map[string]bool,
	tagged map[addrRef]bool, limit int) ([]store.Counterparty, error) {
	var out []store.Counterparty
	for i, c := range cands {
		if len(out) == limit {
			break
		}
		k := addrRef{chain, c.Address}
		if _, asked := tagged[k]; !asked {
			if err := a.askTags(ctx, chain, cands[i:], want, tagged); err != nil {
				return nil, err
			}
		}
		if tagged[k] {
			out = append(out, c)
		}
	}
	return out, nil
}

// askTags asks intelligence about the next intelclient.MaxBatch addresses of cands not asked
// yet (one call: the most its tags lookup takes), and records for each whether it carries one
// of want.
func (a *App) askTags(ctx context.Context, chain string, cands []store.Counterparty, want map[string]bool, tagged map[addrRef]bool) error {
	var batch []string
	for _, c := range cands {
		if _, asked := tagged[addrRef{chain, c.Address}]; !asked {
			batch = append(batch, c.Address)
			if len(batch) == intelclient.MaxBatch {
				break
			}
		}
	}
	got, err := a.tags.Tags(ctx, chain, batch)
	if err != nil {
		return err
	}
	for _, addr := range batch {
		match := false
		for _, t := range got[addr] {
			match = match || want[t]
		}
		tagged[addrRef{chain, addr}] = match
	}
	return nil
}
