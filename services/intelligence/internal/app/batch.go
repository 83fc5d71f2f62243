package app

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"

	"github.com/chainintel/chainintel/libs/chains"
	balclient "github.com/chainintel/chainintel/services/balances/client"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// batchTargets validates a batch's addresses (1..MaxBatch) and returns, for each distinct
// address as given, its targets: on chain when one is given, else on the first configured
// chain of its detected type, or (all) on every configured chain where its format is valid;
// without chain, the chains looked at are restricted to only when that is not empty. An address
// with no target is a 400 naming it.
func (s *Service) batchTargets(raw []string, chain string, all bool, only map[string]bool) ([]string, [][]Target, error) {
	if len(raw) == 0 {
		return nil, nil, invalid("addresses", "give at least one address")
	}
	if len(raw) > MaxBatch {
		return nil, nil, invalid("addresses", "at most %d addresses per call, got %d", MaxBatch, len(raw))
	}
	detectIn := s.Chains // a given chain is looked up among every configured chain
	if chain == "" {
		var err error
		if detectIn, err = s.within(only); err != nil {
			return nil, nil, err
		}
	}
	which := "requested"
	if chain == "" && len(only) == 0 && !all {
		which = "configured"
	}
	var keys []string
	var targets [][]Target
	seen := make(map[string]bool, len(raw))
	for i, r := range raw {
		if seen[r] {
			continue
		}
		seen[r] = true
		var ts []Target
		if all {
			ts, _ = ParseTargetsAll(s.Chains, r, only) // none left is the 400 below, naming the address
		} else if t, err := ParseTarget(detectIn, r, chain); err == nil {
			ts = []Target{t}
		} else if errors.Is(err, ErrInvalidInput) {
			return nil, nil, err // the chain parameter
		}
		if len(ts) == 0 {
			return nil, nil, invalid(fmt.Sprintf("addresses[%d]", i), "%q is not a valid address on any %s chain", short(r), which)
		}
		keys = append(keys, r)
		targets = append(targets, ts)
	}
	return keys, targets, nil
}

// within is the configured chains restricted to only (every configured chain when only is
// empty); only holds names the caller's chains filter already resolved (params.Chains).
func (s *Service) within(only map[string]bool) (*chains.Set, error) {
	if len(only) == 0 {
		return s.Chains, nil
	}
	var names []string
	for _, c := range s.Chains.Chains() {
		if only[c.Name] {
			names = append(names, c.Name)
		}
	}
	if len(names) == 0 {
		return nil, invalid("chains", "names no chain configured on this deployment")
	}
	return chains.NewSet(names)
}

func flatten(targets [][]Target) []Target {
	var out []Target
	for _, ts := range targets {
		out = append(out, ts...)
	}
	return out
}

// batchOnChain is batchTargets for one chain (chain, else each address's detected one among
// only): the distinct addresses as given and, parallel to them, their one target each.
func (s *Service) batchOnChain(raw []string, chain string, only map[string]bool) ([]string, []Target, error) {
	keys, targets, err := s.batchTargets(raw, chain, false, only)
	if err != nil {
		return nil, nil, err
	}
	return keys, flatten(targets), nil
}

// BatchAll answers up to MaxBatch addresses on every configured chain where each is valid (only
// the chains in only, when given), keyed by the address as given and then by chain.
func (s *Service) BatchAll(ctx context.Context, raw []string, only map[string]bool, enrich *EnrichOptions) (map[string]map[string]AddressInfo, error) {
	keys, targets, err := s.batchTargets(raw, "", true, only)
	if err != nil {
		return nil, err
	}
	flat := flatten(targets)
	infos, err := s.infos(ctx, flat)
	if err != nil {
		return nil, err
	}
	if enrich != nil {
		if err := s.enrich(ctx, flat, infos, *enrich); err != nil {
			return nil, err
		}
	}
	out := make(map[string]map[string]AddressInfo, len(keys))
	n := 0
	for i, k := range keys {
		m := make(map[string]AddressInfo, len(targets[i]))
		for _, t := range targets[i] {
			m[t.Chain] = infos[n]
			n++
		}
		out[k] = m
	}
	return out, nil
}

// EnrichedBatch answers up to MaxBatch addresses enriched (tags, clusters), each on chain when
// given, else on the chain detected from its format (among only, when given), keyed by the
// address as given.
func (s *Service) EnrichedBatch(ctx context.Context, raw []string, chain string, only map[string]bool, o EnrichOptions) (map[string]AddressInfo, error) {
	keys, flat, err := s.batchOnChain(raw, chain, only)
	if err != nil {
		return nil, err
	}
	infos, err := s.infos(ctx, flat)
	if err != nil {
		return nil, err
	}
	if err := s.enrich(ctx, flat, infos, o); err != nil {
		return nil, err
	}
	out := make(map[string]AddressInfo, len(keys))
	for i, k := range keys {
		out[k] = infos[i]
	}
	return out, nil
}

// TagIDs answers up to MaxBatch addresses, each on chain when given, else on the chain detected
// from its format, with the ids of the tags it carries there (its populatedTags on the enriched
// batch) keyed by the address as given; an address without tags is absent. Only the tags are
// read: no attribution, no user-labels lookup (transfers' /counterparties tags filter).
func (s *Service) TagIDs(ctx context.Context, raw []string, chain string) (map[string][]string, error) {
	keys, flat, err := s.batchOnChain(raw, chain, nil)
	if err != nil {
		return nil, err
	}
	tags, err := s.addressTags(ctx, flat)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for i, k := range keys {
		t := flat[i]
		for _, pt := range tags[store.AddressKey{ChainType: string(t.ChainType), Address: t.Address}] {
			if tagOnChain(pt.Tag, t.Chain) {
				out[k] = append(out[k], pt.Tag.ID)
			}
		}
	}
	return out, nil
}

// addressTags loads the tags of ts' distinct addresses in one query.
func (s *Service) addressTags(ctx context.Context, ts []Target) (map[store.AddressKey][]store.PopulatedTag, error) {
	keys := make([]store.AddressKey, 0, len(ts))
	seen := map[store.AddressKey]bool{}
	for _, t := range ts {
		k := store.AddressKey{ChainType: string(t.ChainType), Address: t.Address}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return s.Store.AddressTagsMany(ctx, keys)
}

// enrich adds tags (one query for all addresses) and clusters to infos, parallel to ts, and
// drops the predicted entity, as o says.
func (s *Service) enrich(ctx context.Context, ts []Target, infos []AddressInfo, o EnrichOptions) error {
	var tags map[store.AddressKey][]store.PopulatedTag
	if o.Tags {
		var err error
		if tags, err = s.addressTags(ctx, ts); err != nil {
			return err
		}
	}
	var keys []string
	if o.Clusters {
		keys = make([]string, len(ts))
		for i, t := range ts {
			keys[i] = t.Key()
		}
	}
	clusters := s.Cache.Lookup(keys)
	for i, t := range ts {
		if !o.Predictions {
			infos[i].PredictedEntity = nil
		}
		if o.Tags {
			mine := tagsOnChain(tags[store.AddressKey{ChainType: string(t.ChainType), Address: t.Address}], t.Chain)
			infos[i].PopulatedTags = &mine
		}
		if o.Clusters {
			ids := []string{}
			ids = append(ids, clusters[i].ClusterIDs...)
			infos[i].ClusterIDs = &ids
		}
	}
	return nil
}

// EntityTypes lists the types operator entities have.
func (s *Service) EntityTypes(ctx context.Context) ([]string, error) {
	ts, err := s.Store.EntityTypes(ctx)
	if ts == nil {
		ts = []string{}
	}
	return ts, err
}

// KnownEntities is what intelligence knows of some entity ids: those it holds (with or without
// attributed addresses) and every entity type.
type KnownEntities struct {
	Known []string `json:"known"`
	Types []string `json:"types"`
}

// EntitiesKnown answers up to MaxBatch operator entity ids: transfers asks it about the entities
// and types its filters name that its read model does not hold (one without addresses is known
// here only), so a known one matches nothing instead of being a 404 or a 400.
func (s *Service) EntitiesKnown(ctx context.Context, ids []string) (KnownEntities, error) {
	if len(ids) > MaxBatch {
		return KnownEntities{}, invalid("ids", "at most %d ids per call, got %d", MaxBatch, len(ids))
	}
	out := KnownEntities{Known: []string{}}
	missing, err := s.Store.MissingEntities(ctx, ids)
	if err != nil {
		return out, err
	}
	for _, id := range ids {
		if !slices.Contains(missing, id) && !slices.Contains(out.Known, id) {
			out.Known = append(out.Known, id)
		}
	}
	out.Types, err = s.EntityTypes(ctx)
	return out, err
}

// ClusterSummary is the public API's cluster summary; FirstTx and LastTx are null without
// activity.
type ClusterSummary struct {
	ClusterID    string  `json:"clusterId"`
	NumAddresses int64   `json:"numAddresses"`
	VolumeUSD    float64 `json:"volumeUsd"`
	BalanceUSD   float64 `json:"balanceUsd"`
	FirstTx      *string `json:"firstTx"`
	LastTx       *string `json:"lastTx"`
}

var clusterIDRE = regexp.MustCompile(`^cl-[0-9a-f]{16}$`)

// DefaultClusterMaxMembers is the most members a cluster summary covers by default: what the
// summary reads grows with members squared at worst (docs/intelligence.md), and its balances
// are one call to the balances service (balclient.MaxAddresses).
const DefaultClusterMaxMembers = 10_000

// ClusterSummary sums the activity of a heuristic cluster's members (as an entity summary does)
// and, with a balances service, the USD value of their balances. A cluster of more than
// ClusterMaxMembers members is refused as invalid input naming id, with nothing summed.
func (s *Service) ClusterSummary(ctx context.Context, id string) (ClusterSummary, error) {
	if !clusterIDRE.MatchString(id) {
		return ClusterSummary{}, notFound("cluster", "unknown cluster %q (cluster ids are cl- and 16 hex digits)", short(id))
	}
	limit := s.ClusterMaxMembers
	if limit <= 0 {
		limit = DefaultClusterMaxMembers
	}
	ca, err := s.Store.ClusterActivity(ctx, id, limit)
	if err != nil {
		return ClusterSummary{}, err
	}
	if ca.NumAddresses == 0 {
		return ClusterSummary{}, notFound("cluster", "unknown cluster %q", id)
	}
	if ca.TooLarge {
		return ClusterSummary{}, invalid("id", "cluster %s has more than %d members; a summary covers clusters of at most %d members", id, limit, limit)
	}
	sum := ClusterSummary{ClusterID: id, NumAddresses: ca.NumAddresses, VolumeUSD: ca.VolumeUSD}
	if s.Balances != nil {
		refs := make([]balclient.AddressRef, len(ca.Members))
		for i, m := range ca.Members {
			refs[i] = balclient.AddressRef{ChainType: m.ChainType, Address: m.Address}
		}
		sort.Slice(refs, func(i, j int) bool { return refs[i].ChainType+refs[i].Address < refs[j].ChainType+refs[j].Address })
		tot, err := s.Balances.USDTotals(ctx, refs, nil)
		if err != nil {
			return ClusterSummary{}, unavailable("balances", err)
		}
		sum.BalanceUSD = tot.TotalUSD
	}
	if ca.TransferCount > 0 {
		f, l := msTime(ca.FirstMs), msTime(ca.LastMs)
		sum.FirstTx, sum.LastTx = &f, &l
	}
	return sum, nil
}
