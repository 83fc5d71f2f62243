package app

import (
	"context"
	"sort"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/render"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// SeedAddress is one of an entity's addresses that is a seed itself.
type SeedAddress struct {
	Address      string `json:"address"`
	ChainType    string `json:"chain_type"`
	RiskCategory string `json:"risk_category"`
	SeedScore    int    `json:"seed_score"`
}

// EntityRiskSource is one of the riskiest seeds an entity's addresses are exposed to.
type EntityRiskSource struct {
	SeedAddress     string  `json:"seed_address"`
	RiskCategory    string  `json:"risk_category"`
	Direction       string  `json:"direction"`
	HopDistance     int     `json:"hop_distance"`
	ContributionUSD float64 `json:"contribution_usd"`
}

// EntityRisk is an entity's risk score over its busiest addresses (RiskEntityAddresses).
type EntityRisk struct {
	EntityID                     string  `json:"entity_id"`
	EntityName                   *string `json:"entity_name"`
	EntityType                   *string `json:"entity_type"`
	RiskLevel                    string  `json:"risk_level"`
	MaxScore                     *int    `json:"max_score"`
	MaxScoreBackward             *int    `json:"max_score_backward"`
	MaxScoreForward              *int    `json:"max_score_forward"`
	GreatestRiskCategory         *string `json:"greatest_risk_category"`
	GreatestRiskCategoryBackward *string `json:"greatest_risk_category_backward"`
	GreatestRiskCategoryForward  *string `json:"greatest_risk_category_forward"`
	HighestRiskAddress           *string `json:"highest_risk_address"`
	RiskyAddresses               int     `json:"risky_addresses"`
	RiskyAddressesBackward       int     `json:"risky_addresses_backward"`
	RiskyAddressesForward        int     `json:"risky_addresses_forward"`
	SeedAddresses                int     `json:"seed_addresses"`
	CategoryScores
	TopSeedAddresses []SeedAddress      `json:"top_seed_addresses"`
	TopSources       []EntityRiskSource `json:"top_sources"`
	UpdatedAt        string             `json:"updated_at"`
}

// EntityRisk scores an operator entity (its busiest RiskEntityAddresses attributed addresses)
// or the caller's user entity (a UUID id, read from user-labels as /intelligence/entity reads
// it: its first RiskEntityAddresses addresses by chain type and address). Unknown: a 404.
func (s *Service) EntityRisk(ctx context.Context, id string) (EntityRisk, error) {
	var out EntityRisk
	var keys []store.AddressKey
	if ulclient.IsUserEntityID(id) {
		ue, err := s.userEntity(ctx, canonicalUserEntityID(id), false)
		if err != nil {
			return out, err
		}
		typ := "user"
		out.EntityID, out.EntityName, out.EntityType = ue.ID, &ue.Name, &typ
		keys = normalizedKeys(ue.Addresses)
		if len(keys) > RiskEntityAddresses {
			keys = keys[:RiskEntityAddresses]
		}
	} else {
		e, err := s.operatorEntity(ctx, id)
		if err != nil {
			return out, err
		}
		out.EntityID, out.EntityName = e.ID, &e.Name
		if e.Type != "" {
			out.EntityType = &e.Type
		}
		if keys, err = s.Store.RiskEntityAddresses(ctx, id, RiskEntityAddresses); err != nil {
			return out, err
		}
	}
	ts := make([]Target, len(keys))
	for i, k := range keys {
		ts[i] = Target{ChainType: chains.Type(k.ChainType), Address: k.Address}
	}
	results, err := s.scoreAll(ctx, ts)
	if err != nil {
		return out, err
	}
	present := map[string]bool{}
	if len(results) > 0 {
		present = results[0].present
	} else {
		f, err := s.Store.RiskFacts(ctx, "", "", nil, riskMapping)
		if err != nil {
			return out, err
		}
		present = f.Present
	}
	s.aggregateRisk(&out, results, present)
	return out, nil
}

// aggregateRisk fills an entity's score from its addresses' (busiest first).
func (s *Service) aggregateRisk(out *EntityRisk, results []riskResult, present map[string]bool) {
	cats := [3]map[string]int{{}, {}, {}}
	out.TopSeedAddresses, out.TopSources = []SeedAddress{}, []EntityRiskSource{}
	best := 0
	var hits []riskHit
	for _, r := range results {
		for i := range cats {
			for c, v := range r.cats[i] {
				cats[i][c] = max(cats[i][c], v)
			}
		}
		v := r.view
		if v.MaxScore != nil && *v.MaxScore > best {
			best = *v.MaxScore
			a := v.Address
			out.HighestRiskAddress = &a
		}
		out.RiskyAddresses += positive(v.MaxScore)
		out.RiskyAddressesBackward += positive(v.MaxScoreBackward)
		out.RiskyAddressesForward += positive(v.MaxScoreForward)
		if v.IsSeed {
			out.SeedAddresses++
			if len(out.TopSeedAddresses) < riskTopSources {
				out.TopSeedAddresses = append(out.TopSeedAddresses, SeedAddress{Address: v.Address,
					ChainType: v.ChainType, RiskCategory: r.hits[0].category, SeedScore: riskDecay[0]})
			}
		}
		for _, h := range r.hits {
			if h.direction != riskSelf {
				hits = append(hits, h)
			}
		}
	}
	out.CategoryScores.fill(present, cats[0])
	out.MaxScore, out.GreatestRiskCategory = greatest(cats[0], present)
	out.MaxScoreBackward, out.GreatestRiskCategoryBackward = greatest(cats[1], present)
	out.MaxScoreForward, out.GreatestRiskCategoryForward = greatest(cats[2], present)
	out.RiskLevel = riskLevel(out.MaxScore)
	out.UpdatedAt = render.Timestamp(s.now())
	// A seed reached from several of the entity's addresses is listed once per direction, at
	// its riskiest (hits sorted riskiest first).
	sortHits(hits)
	seen := map[[2]string]bool{}
	for _, h := range hits {
		k := [2]string{h.seed, h.direction}
		if seen[k] || len(out.TopSources) == riskTopSources {
			continue
		}
		seen[k] = true
		out.TopSources = append(out.TopSources, EntityRiskSource{SeedAddress: h.seed, RiskCategory: h.category,
			Direction: h.direction, HopDistance: h.hop, ContributionUSD: h.usd})
	}
	sort.SliceStable(out.TopSeedAddresses, func(i, j int) bool {
		return riskRank[out.TopSeedAddresses[i].RiskCategory] < riskRank[out.TopSeedAddresses[j].RiskCategory]
	})
}

func positive(p *int) int {
	if p != nil && *p > 0 {
		return 1
	}
	return 0
}

// EntityRiskBatch scores 1..RiskMaxEntityBatch entities, keyed by the id as given (each
// distinct entity once: a UUID in two cases is scored once and answered under both); an
// unknown one is a 404 naming it.
func (s *Service) EntityRiskBatch(ctx context.Context, ids []string) (map[string]EntityRisk, error) {
	if err := batchSize("entity_ids", "entity ids", len(ids), RiskMaxEntityBatch); err != nil {
		return nil, err
	}
	out := make(map[string]EntityRisk, len(ids))
	scored := make(map[string]EntityRisk, len(ids)) // by entity: a user entity's UUID in any case is one
	for _, id := range ids {
		if _, ok := out[id]; ok {
			continue
		}
		key := id // an operator id is lower case: another case is another (unknown) id
		if ulclient.IsUserEntityID(id) {
			key = canonicalUserEntityID(id)
		}
		v, ok := scored[key]
		if !ok {
			var err error
			if v, err = s.EntityRisk(ctx, id); err != nil {
				return nil, err
			}
			scored[key] = v
		}
		out[id] = v
	}
	return out, nil
}
