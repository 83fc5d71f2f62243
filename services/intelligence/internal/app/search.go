package app

import (
	"context"
	"errors"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/chainintel/chainintel/libs/render"
	"golang.org/x/sync/errgroup"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// SearchCategories are the public API's search toggles, in answer order. ens, services,
// opensea, pools and polymarketEvents are accepted and always empty: this platform holds no ENS
// names, service directory, OpenSea profiles, liquidity pools or prediction markets.
var SearchCategories = []string{"serviceEntities", "serviceAddresses", "userEntities", "userAddresses", "ens",
	"types", "services", "twitter", "opensea", "tokens", "pools", "tags", "polymarketEvents"}

// Search limits.
const (
	MaxSearchQueryRunes  = 200
	DefaultSearchResults = 10
	MaxSearchResults     = 100
	MaxSearchOffset      = 10000
)

// SearchPage is how many results of a category to return (0: none) after skipping Offset.
type SearchPage struct{ Limit, Offset int }

// SearchRequest is a validated search: the query and the page of each category (a category
// absent from Pages gets DefaultSearchResults from the start).
type SearchRequest struct {
	Query string
	Pages map[string]SearchPage
}

func (r SearchRequest) page(category string) SearchPage {
	if p, ok := r.Pages[category]; ok {
		return p
	}
	return SearchPage{Limit: DefaultSearchResults}
}

// SearchTag is a tag a search found: its id and its label.
type SearchTag struct {
	Value     string `json:"value"`
	Formatted string `json:"formatted"`
}

// SearchResult is the public API's search answer; every category is present (possibly empty).
type SearchResult struct {
	ServiceEntities   []EntityView  `json:"serviceEntities"`
	ServiceAddresses  []AddressInfo `json:"serviceAddresses"`
	UserEntities      []EntityView  `json:"userEntities"`
	UserAddresses     []AddressInfo `json:"userAddresses"`
	ENS               []struct{}    `json:"ens"`
	Types             []string      `json:"types"`
	Services          []EntityView  `json:"services"`
	Twitter           []EntityView  `json:"twitter"`
	OpenSea           []struct{}    `json:"opensea"`
	Tokens            []TokenInfo   `json:"tokens"`
	Pools             []struct{}    `json:"pools"`
	Tags              []SearchTag   `json:"tags"`
	PolymarketEvents  []struct{}    `json:"polymarketEvents"`
	PolymarketWallets []struct{}    `json:"polymarketWallets"`
}

func emptySearch() SearchResult {
	return SearchResult{ServiceEntities: []EntityView{}, ServiceAddresses: []AddressInfo{}, UserEntities: []EntityView{},
		UserAddresses: []AddressInfo{}, ENS: []struct{}{}, Types: []string{}, Services: []EntityView{}, Twitter: []EntityView{},
		OpenSea: []struct{}{}, Tokens: []TokenInfo{}, Pools: []struct{}{}, Tags: []SearchTag{}, PolymarketEvents: []struct{}{},
		PolymarketWallets: []struct{}{}}
}

// ValidSearchQuery checks the query's length.
func ValidSearchQuery(q string) error {
	if n := utf8.RuneCountInString(q); n == 0 || n > MaxSearchQueryRunes {
		return invalid("query", "must be 1 to %d characters (got %d)", MaxSearchQueryRunes, n)
	}
	return nil
}

// Search finds operator entities (by id or name), attributed addresses (by address or label
// prefix), the caller's own entities and labelled addresses, tokens (by ticker, name, pricing id
// or contract address prefix), tags and entity types, each category ranked best first: equal to
// the query, then starting with it, then containing it.
//
// Entities, twitter handles and types come from the attribution cache's entities (memory);
// addresses, tags and tokens from PostgreSQL in one batch, while user-labels is asked at the
// same time.
func (s *Service) Search(ctx context.Context, r SearchRequest) (SearchResult, error) {
	out := emptySearch()
	if err := ValidSearchQuery(r.Query); err != nil {
		return out, err
	}
	q := strings.ToLower(strings.TrimSpace(r.Query))
	if q == "" {
		return out, nil
	}
	if s.SearchPerCategory {
		return s.searchPerCategory(ctx, r, q)
	}
	if p := r.page("serviceEntities"); p.Limit > 0 {
		for _, e := range s.Cache.SearchEntities(q, p.Limit, p.Offset) {
			out.ServiceEntities = append(out.ServiceEntities, *entityView(&e))
		}
	}
	if p := r.page("twitter"); p.Limit > 0 {
		for _, e := range s.Cache.SearchTwitter(q, p.Limit, p.Offset) {
			out.Twitter = append(out.Twitter, *entityView(&e))
		}
	}
	if p := r.page("types"); p.Limit > 0 {
		out.Types = append(out.Types, s.Cache.SearchTypes(q, p.Limit, p.Offset)...)
	}
	if !s.searchesUser(ctx, r) {
		// Nothing to wait for but PostgreSQL: no second goroutine to schedule.
		if err := s.searchStored(ctx, r, q, &out); err != nil {
			return emptySearch(), err
		}
		return out, nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.searchStored(gctx, r, q, &out) })
	g.Go(func() error { return s.searchUser(gctx, q, r.page("userEntities"), r.page("userAddresses"), &out) })
	if err := g.Wait(); err != nil {
		return emptySearch(), err
	}
	return out, nil
}

// searchesUser reports whether a search asks user-labels: a caller with a key, and a user
// category on.
func (s *Service) searchesUser(ctx context.Context, r SearchRequest) bool {
	_, caller := httpx.IdentityFrom(ctx)
	return caller && s.UserLabels != nil && (r.page("userEntities").Limit > 0 || r.page("userAddresses").Limit > 0)
}

// searchStored fills the addresses, tags and tokens of out from one batch of statements.
func (s *Service) searchStored(ctx context.Context, r SearchRequest, q string, out *SearchResult) error {
	raw := strings.TrimSpace(r.Query)
	pa, pt, pk := r.page("serviceAddresses"), r.page("tags"), r.page("tokens")
	addrPrefix, labelPrefix := addressPrefixes(raw)
	sq := store.SearchQuery{AddrPrefix: addrPrefix, LabelPrefix: labelPrefix, Text: q,
		Tags: store.Page{Limit: pt.Limit, Offset: pt.Offset}, Tokens: store.Page{Limit: pk.Limit, Offset: pk.Offset}}
	if pa.Limit > 0 {
		sq.Addresses = pa.Offset + pa.Limit
	}
	hits, err := s.Store.Search(ctx, sq)
	if err != nil {
		return err
	}
	for _, t := range hits.Tags {
		out.Tags = append(out.Tags, SearchTag{Value: t.ID, Formatted: t.Label})
	}
	if pk.Limit > 0 {
		ts, err := s.tokenInfos(ctx, hits.Tokens)
		if err != nil {
			return err
		}
		out.Tokens = append(out.Tokens, ts...)
	}
	if pa.Limit > 0 {
		as, err := s.addressInfos(ctx, hits.Addresses, addrPrefix, labelPrefix, pa)
		if err != nil {
			return err
		}
		out.ServiceAddresses = append(out.ServiceAddresses, as...)
	}
	return nil
}

// addressPrefixes are the prefixes an address search looks for: the query as given for
// addresses (lower case when it starts 0x: EVM addresses are stored lower case) and lower case
// for labels.
func addressPrefixes(raw string) (addrPrefix, labelPrefix string) {
	return address.CanonicalHash(raw), strings.ToLower(raw)
}

// searchPerCategory answers every category with its own PostgreSQL statement, run at once:
// the plan before entities were searched in memory and the rest batched, kept as the
// benchmark's baseline (Service.SearchPerCategory).
func (s *Service) searchPerCategory(ctx context.Context, r SearchRequest, q string) (SearchResult, error) {
	out := emptySearch()
	g, gctx := errgroup.WithContext(ctx)
	if p := r.page("serviceEntities"); p.Limit > 0 {
		g.Go(func() error {
			es, err := s.Store.SearchEntities(gctx, q, p.Limit, p.Offset)
			for i := range es {
				out.ServiceEntities = append(out.ServiceEntities, *entityView(&es[i]))
			}
			return err
		})
	}
	if p := r.page("twitter"); p.Limit > 0 {
		g.Go(func() error {
			es, err := s.Store.SearchTwitter(gctx, q, p.Limit, p.Offset)
			for i := range es {
				out.Twitter = append(out.Twitter, *entityView(&es[i]))
			}
			return err
		})
	}
	if p := r.page("types"); p.Limit > 0 {
		g.Go(func() error {
			ts, err := s.Store.SearchTypes(gctx, q, p.Limit, p.Offset)
			out.Types = append(out.Types, ts...)
			return err
		})
	}
	s.searchStoredPerCategory(gctx, g, r, q, &out)
	g.Go(func() error { return s.searchUser(gctx, q, r.page("userEntities"), r.page("userAddresses"), &out) })
	if err := g.Wait(); err != nil {
		return emptySearch(), err
	}
	return out, nil
}

// searchStoredPerCategory starts the tags, tokens and addresses statements of the baseline
// plan, one goroutine and statement each.
func (s *Service) searchStoredPerCategory(ctx context.Context, g *errgroup.Group, r SearchRequest, q string, out *SearchResult) {
	if p := r.page("tags"); p.Limit > 0 {
		g.Go(func() error {
			tags, err := s.Store.SearchTags(ctx, q, p.Limit, p.Offset)
			for _, t := range tags {
				out.Tags = append(out.Tags, SearchTag{Value: t.ID, Formatted: t.Label})
			}
			return err
		})
	}
	if p := r.page("tokens"); p.Limit > 0 {
		g.Go(func() error {
			hits, err := s.Store.SearchTokens(ctx, q, p.Limit, p.Offset)
			if err != nil {
				return err
			}
			ts, err := s.tokenInfos(ctx, hits)
			out.Tokens = append(out.Tokens, ts...)
			return err
		})
	}
	if p := r.page("serviceAddresses"); p.Limit > 0 {
		g.Go(func() error {
			addrPrefix, labelPrefix := addressPrefixes(strings.TrimSpace(r.Query))
			hits, err := s.Store.SearchAddresses(ctx, addrPrefix, labelPrefix, p.Offset+p.Limit)
			if err != nil {
				return err
			}
			as, err := s.addressInfos(ctx, hits, addrPrefix, labelPrefix, p)
			out.ServiceAddresses = append(out.ServiceAddresses, as...)
			return err
		})
	}
}

// addressInfos merges the address-prefix and label-prefix matches: an equal address first,
// then an equal label, then address prefixes, then label prefixes (each in index order).
func (s *Service) addressInfos(ctx context.Context, hits []store.AddressHit, addrPrefix, lower string, p SearchPage) ([]AddressInfo, error) {
	rank := func(h store.AddressHit) int {
		switch {
		case !h.ByLabel && h.Address == addrPrefix:
			return 0
		case h.ByLabel && strings.ToLower(h.Label) == lower:
			return 1
		case !h.ByLabel:
			return 2
		}
		return 3
	}
	sort.SliceStable(hits, func(i, j int) bool { return rank(hits[i]) < rank(hits[j]) })
	seen := make(map[string]bool, len(hits))
	var ts []Target
	for _, h := range hits {
		k := h.ChainType + ":" + h.Address
		if seen[k] {
			continue
		}
		seen[k] = true
		c, ok := firstOfType(s.Chains, chains.Type(h.ChainType))
		if !ok {
			continue // a chain type this deployment does not serve
		}
		ts = append(ts, Target{Chain: c.Name, ChainType: c.Type, Address: h.Address})
	}
	ts = ts[min(p.Offset, len(ts)):min(p.Offset+p.Limit, len(ts))]
	if len(ts) == 0 {
		return []AddressInfo{}, nil
	}
	return s.infos(ctx, ts)
}

// tokenInfos is the answer of each token a search found: a registry token as its page shows it,
// a token seen on chain with its one deployment.
func (s *Service) tokenInfos(ctx context.Context, hits []store.TokenHit) ([]TokenInfo, error) {
	out := []TokenInfo{}
	for _, h := range hits {
		if h.PricingID == "" {
			out = append(out, TokenInfo{Identifier: TokenIdentifier{Chain: h.Chain, Address: h.Address}, Name: h.Name,
				Symbol: h.Symbol, Deployments: []TokenDeployment{{Chain: h.Chain, Address: h.Address, Decimals: h.Decimals}}})
			continue
		}
		mt, err := s.Store.MarketToken(ctx, h.PricingID)
		if errors.Is(err, store.ErrNotFound) {
			continue // removed from the registry since the search read it
		}
		if err != nil {
			return nil, err
		}
		info, err := s.tokenInfo(ctx, mt, TokenIdentifier{PricingID: render.NullString(h.PricingID)})
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// searchUser fills the caller's entities and labelled addresses from user-labels (one call when
// both categories start at the same offset). Callers without a key have none.
func (s *Service) searchUser(ctx context.Context, q string, pe, pa SearchPage, out *SearchResult) error {
	if s.UserLabels == nil || (pe.Limit == 0 && pa.Limit == 0) {
		return nil
	}
	if _, ok := httpx.IdentityFrom(ctx); !ok {
		return nil
	}
	var ents []ulclient.UserEntity
	var labels []ulclient.UserLabel
	if pe.Offset == pa.Offset {
		r, err := s.UserLabels.Search(ctx, q, max(pe.Limit, pa.Limit), pe.Offset)
		if err != nil {
			return unavailable("user-labels", err)
		}
		ents, labels = r.Entities[:min(pe.Limit, len(r.Entities))], r.Labels[:min(pa.Limit, len(r.Labels))]
	} else {
		for _, c := range []struct {
			p     SearchPage
			label bool
		}{{pe, false}, {pa, true}} {
			r, err := s.UserLabels.Search(ctx, q, c.p.Limit, c.p.Offset)
			if err != nil {
				return unavailable("user-labels", err)
			}
			if c.label {
				labels = r.Labels
			} else {
				ents = r.Entities
			}
		}
	}
	for _, ue := range ents {
		out.UserEntities = append(out.UserEntities, userEntityView(ue))
	}
	var ts []Target
	for _, l := range labels {
		if c, ok := firstOfType(s.Chains, chains.Type(l.ChainType)); ok {
			ts = append(ts, Target{Chain: c.Name, ChainType: c.Type, Address: l.Address})
		}
	}
	if len(ts) == 0 {
		return nil
	}
	infos, err := s.infos(ctx, ts)
	if err != nil {
		return err
	}
	out.UserAddresses = infos
	return nil
}
