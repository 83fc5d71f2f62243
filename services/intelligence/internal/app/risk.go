package app

import (
	"context"
	"math"
	"sort"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/render"
	"github.com/chainintel/chainintel/services/intelligence/client"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// RiskCategory is one risk category of the public risk scores and what makes an address a seed
// of it: its attributed entity having one of Types, or the address carrying one of Tags
// (docs/intelligence.md "Risk scores" has this table).
type RiskCategory struct {
	Name  string
	Types []string
	Tags  []string
}

// RiskCategories is the one mapping from attributions to risk categories, in the order ties
// between categories are broken (the first wins). GraphSense actor categories reach these
// types through the importer (dark_web → darkweb, hacking and service_hack → hacker, phishing
// and social_engineering → scam, sanction → sanctioned); its OFAC pack tags its addresses
// ofac-sanctioned, its mixing_service, ransomware and scam packs tag mixer, ransomware, scam.
// Curated imports may use any of the types and tags.
var RiskCategories = []RiskCategory{
	{Name: "sanctions", Types: []string{"sanctioned"}, Tags: []string{"ofac-sanctioned", "sanctioned"}},
	{Name: "mixer", Types: []string{"mixer"}, Tags: []string{"mixer"}},
	{Name: "hacker", Types: []string{"hacker"}, Tags: []string{"hacker"}},
	{Name: "ransomware", Types: []string{"ransomware"}, Tags: []string{"ransomware"}},
	{Name: "darkweb", Types: []string{"darkweb"}, Tags: []string{"darkweb"}},
	{Name: "gambling", Types: []string{"gambling"}, Tags: []string{"gambling"}},
	{Name: "ponzi", Types: []string{"ponzi"}, Tags: []string{"ponzi"}},
	{Name: "scam", Types: []string{"scam"}, Tags: []string{"scam"}},
	{Name: "privacy", Types: []string{"privacy"}, Tags: []string{"privacy"}},
	{Name: "non_kyc_service", Types: []string{"non_kyc_service"}, Tags: []string{"non_kyc_service"}},
	{Name: "mixed_kyc_service", Types: []string{"mixed_kyc_service"}, Tags: []string{"mixed_kyc_service"}},
	{Name: "token_blacklist", Tags: []string{"token_blacklist"}},
}

// The bounds of a risk search and of the risk routes (docs/intelligence.md "Risk scores").
const (
	// RiskMaxHops is how far a search goes from the address, each way.
	RiskMaxHops = 3
	// RiskFrontier is the most pairs a hop keeps, each way: the largest by USD volume.
	RiskFrontier = 200
	// RiskHubTransfers is the most transfers an address reached by a search may have for the
	// search to go past it. A hub (an exchange hot wallet, a router, a bridge) is scored when
	// reached but its pairs are not read: exposure through it is spread over its thousands of
	// counterparties, and reading them all, to keep the largest, would make every address that
	// once paid an exchange cost as much as the exchange's history (a batch of them timed out at
	// the edge). The scored address itself is always searched from.
	RiskHubTransfers = 10_000
	// RiskMaxBatch is the most addresses an address batch takes: each costs a search (four
	// round trips, up to seven statements), where an attribution lookup costs a cache read.
	RiskMaxBatch = client.RiskMaxBatch
	// RiskEntityAddresses is the most addresses of an entity its score covers: its busiest.
	RiskEntityAddresses = 25
	// RiskMaxEntityBatch is the most entities an entity batch takes (each up to
	// RiskEntityAddresses searches).
	RiskMaxEntityBatch = client.RiskMaxEntityBatch
	// riskTopSources is the most top_sources and top_seed_addresses an answer lists.
	riskTopSources = 5
)

// riskDecay is the score a seed gives an address it is hop hops away from.
var riskDecay = [RiskMaxHops + 1]int{100, 75, 50, 25}

// Directions of a risk hit: the address itself is the seed, funds came from the seed to the
// address (backward: the search followed incoming pairs), or went from the address to it.
const (
	riskSelf     = "self"
	riskBackward = "backward"
	riskForward  = "forward"
)

var riskMapping = func() store.RiskMapping {
	var m store.RiskMapping
	for _, c := range RiskCategories {
		for _, t := range c.Types {
			m.Types, m.TypeCategories = append(m.Types, t), append(m.TypeCategories, c.Name)
		}
		for _, t := range c.Tags {
			m.Tags, m.TagCategories = append(m.Tags, t), append(m.TagCategories, c.Name)
		}
	}
	return m
}()

var riskRank = func() map[string]int {
	m := map[string]int{}
	for i, c := range RiskCategories {
		m[c.Name] = i
	}
	return m
}()

// CategoryScores is each category's score: null when no seed of the category exists in this
// deployment's attributions (so none can be reached), else 0..100.
type CategoryScores struct {
	Sanctions       *int `json:"sanctions_score"`
	Mixer           *int `json:"mixer_score"`
	Hacker          *int `json:"hacker_score"`
	Ransomware      *int `json:"ransomware_score"`
	Darkweb         *int `json:"darkweb_score"`
	Gambling        *int `json:"gambling_score"`
	Ponzi           *int `json:"ponzi_score"`
	Scam            *int `json:"scam_score"`
	Privacy         *int `json:"privacy_score"`
	NonKYCService   *int `json:"non_kyc_service_score"`
	MixedKYCService *int `json:"mixed_kyc_service_score"`
	TokenBlacklist  *int `json:"token_blacklist_score"`
}

func (c *CategoryScores) field(name string) **int {
	switch name {
	case "sanctions":
		return &c.Sanctions
	case "mixer":
		return &c.Mixer
	case "hacker":
		return &c.Hacker
	case "ransomware":
		return &c.Ransomware
	case "darkweb":
		return &c.Darkweb
	case "gambling":
		return &c.Gambling
	case "ponzi":
		return &c.Ponzi
	case "scam":
		return &c.Scam
	case "privacy":
		return &c.Privacy
	case "non_kyc_service":
		return &c.NonKYCService
	case "mixed_kyc_service":
		return &c.MixedKYCService
	}
	return &c.TokenBlacklist
}

// fill sets every present category's score from scores (0 when absent there).
func (c *CategoryScores) fill(present map[string]bool, scores map[string]int) {
	for _, rc := range RiskCategories {
		if present[rc.Name] {
			v := scores[rc.Name]
			*c.field(rc.Name) = &v
		}
	}
}

// RiskSource is one of the riskiest seeds an address is exposed to.
type RiskSource struct {
	SeedAddress     string  `json:"seed_address"`
	RiskCategory    string  `json:"risk_category"`
	Direction       string  `json:"direction"`
	HopDistance     int     `json:"hop_distance"`
	ContributionUSD float64 `json:"contribution_usd"`
	ContributionPct float64 `json:"contribution_pct"`
}

// AddressRisk is an address's risk score (RiskScoreResponse).
type AddressRisk struct {
	Address                      string  `json:"address"`
	ChainType                    string  `json:"chain_type"`
	IsSeed                       bool    `json:"is_seed"`
	RiskLevel                    string  `json:"risk_level"`
	MaxScore                     *int    `json:"max_score"`
	MaxScoreBackward             *int    `json:"max_score_backward"`
	MaxScoreForward              *int    `json:"max_score_forward"`
	GreatestRiskCategory         *string `json:"greatest_risk_category"`
	GreatestRiskCategoryBackward *string `json:"greatest_risk_category_backward"`
	GreatestRiskCategoryForward  *string `json:"greatest_risk_category_forward"`
	HopDistance                  *int    `json:"hop_distance"`
	MaxHopReached                int     `json:"max_hop_reached"`
	CategoryScores
	Sanctioned1HopScore     *int         `json:"sanctioned_1hop_score"`
	RiskWeightedIncomingUSD float64      `json:"risk_weighted_incoming_usd"`
	RiskWeightedOutgoingUSD float64      `json:"risk_weighted_outgoing_usd"`
	TopSources              []RiskSource `json:"top_sources"`
	UpdatedAt               string       `json:"updated_at"`
}

// PathNode is one address of a risk path and its hops from the scored address.
type PathNode struct {
	Address     string `json:"address"`
	HopDistance int    `json:"hop_distance"`
}

// RiskPath is how a seed was reached: the addresses from the scored address (hop 0) to the seed.
type RiskPath struct {
	ChainType       string     `json:"chain_type"`
	SeedAddress     string     `json:"seed_address"`
	RiskCategory    string     `json:"risk_category"`
	Direction       string     `json:"direction"`
	HopDistance     int        `json:"hop_distance"`
	Score           int        `json:"score"`
	ContributionUSD *float64   `json:"contribution_usd"`
	PathNodes       []PathNode `json:"path_nodes"`
}

// AddressRiskPaths is the paths answer.
type AddressRiskPaths struct {
	Address string     `json:"address"`
	Paths   []RiskPath `json:"paths"`
}

// riskHit is one (seed, category, direction) a search reached.
type riskHit struct {
	seed, category, direction string
	hop, score                int
	usd                       float64 // the smallest pair USD on the path (0 for the seed itself)
	path                      []string
}

// riskNode is how a search reached an address: from prev, hop hops out, the smallest pair USD
// on the way being usd.
type riskNode struct {
	prev string
	hop  int
	usd  float64
}

// riskWalk is one direction's breadth-first search.
type riskWalk struct {
	reached  map[string]riskNode
	order    []string // reached addresses in the order found
	frontier []string
}

func newRiskWalk(root string) *riskWalk {
	return &riskWalk{reached: map[string]riskNode{root: {}}, frontier: []string{root}}
}

// advance takes a hop's pairs (largest first) and makes the addresses not reached before the
// next frontier.
func (w *riskWalk) advance(edges []store.RiskEdge, hop int) {
	w.frontier = nil
	for _, e := range edges {
		if _, ok := w.reached[e.Next]; ok {
			continue
		}
		p := w.reached[e.Node]
		usd := e.VolumeUSD
		if p.hop > 0 {
			usd = math.Min(usd, p.usd)
		}
		w.reached[e.Next] = riskNode{prev: e.Node, hop: hop, usd: usd}
		w.order = append(w.order, e.Next)
		w.frontier = append(w.frontier, e.Next)
	}
}

func (w *riskWalk) path(a string) []string {
	var p []string
	for {
		p = append(p, a)
		n := w.reached[a]
		if n.hop == 0 {
			break
		}
		a = n.prev
	}
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// riskResult is a scored address with what its aggregates (entities) need.
type riskResult struct {
	view AddressRisk
	// cats is each category's score overall, backward and forward (the address's own
	// categories count in all three).
	cats    [3]map[string]int
	hits    []riskHit
	present map[string]bool
}

// scoreAddress searches from t both ways and scores it.
func (s *Service) scoreAddress(ctx context.Context, t Target) (riskResult, error) {
	ct := string(t.ChainType)
	walks := [2]*riskWalk{newRiskWalk(t.Address), newRiskWalk(t.Address)}
	maxHop := 0
	for hop := 1; hop <= RiskMaxHops && (len(walks[0].frontier) > 0 || len(walks[1].frontier) > 0); hop++ {
		back, fwd, err := s.Store.RiskHops(ctx, ct, t.Address, walks[0].frontier, walks[1].frontier, RiskFrontier, RiskHubTransfers)
		if err != nil {
			return riskResult{}, err
		}
		walks[0].advance(back, hop)
		walks[1].advance(fwd, hop)
		if len(walks[0].frontier) > 0 || len(walks[1].frontier) > 0 {
			maxHop = hop
		}
	}
	addrs := []string{t.Address}
	for _, w := range walks {
		for _, a := range w.order {
			if _, ok := walks[0].reached[a]; ok && w == walks[1] {
				continue // already listed from the backward walk
			}
			addrs = append(addrs, a)
		}
	}
	facts, err := s.Store.RiskFacts(ctx, ct, t.Address, addrs, riskMapping)
	if err != nil {
		return riskResult{}, err
	}
	var hits []riskHit
	for _, c := range facts.Seeds[t.Address] {
		hits = append(hits, riskHit{seed: t.Address, category: c, direction: riskSelf, score: riskDecay[0], path: []string{t.Address}})
	}
	for i, w := range walks {
		dir := []string{riskBackward, riskForward}[i]
		for _, a := range w.order {
			n := w.reached[a]
			for _, c := range facts.Seeds[a] {
				hits = append(hits, riskHit{seed: a, category: c, direction: dir, hop: n.hop, score: riskDecay[n.hop], usd: n.usd, path: w.path(a)})
			}
		}
	}
	sortHits(hits)
	r := riskResult{hits: hits, present: facts.Present}
	r.view = s.addressRiskView(t, hits, facts, maxHop)
	r.cats = categoryMaxima(hits)
	return r, nil
}

// scoreAll scores ts, at most RiskParallel at once (an exchange's busiest addresses are hubs,
// each a search of a few tenths of a second: one after another, an entity of them passes the
// edge's upstream timeout), and returns the results in ts' order.
func (s *Service) scoreAll(ctx context.Context, ts []Target) ([]riskResult, error) {
	out := make([]riskResult, len(ts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(s.RiskParallel, 1))
	for i, t := range ts {
		g.Go(func() error {
			r, err := s.scoreAddress(gctx, t)
			out[i] = r
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// sortHits orders hits riskiest first: score, then USD, then nearest, then direction, seed and
// category, so answers are stable.
func sortHits(hits []riskHit) {
	sort.SliceStable(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		switch {
		case a.score != b.score:
			return a.score > b.score
		case a.usd != b.usd:
			return a.usd > b.usd
		case a.hop != b.hop:
			return a.hop < b.hop
		case a.direction != b.direction:
			return a.direction < b.direction
		case a.seed != b.seed:
			return a.seed < b.seed
		}
		return riskRank[a.category] < riskRank[b.category]
	})
}

// categoryMaxima is each category's highest score among hits: overall, backward, forward.
func categoryMaxima(hits []riskHit) [3]map[string]int {
	out := [3]map[string]int{{}, {}, {}}
	for _, h := range hits {
		for i, dir := range []string{"", riskBackward, riskForward} {
			if dir == "" || h.direction == dir || h.direction == riskSelf {
				out[i][h.category] = max(out[i][h.category], h.score)
			}
		}
	}
	return out
}

// greatest is the highest score among cats and its category (ties: RiskCategories' order);
// null score when no category is present, null category when the score is 0.
func greatest(cats map[string]int, present map[string]bool) (*int, *string) {
	if len(present) == 0 {
		return nil, nil
	}
	best, name := 0, ""
	for _, c := range RiskCategories {
		if v := cats[c.Name]; v > best {
			best, name = v, c.Name
		}
	}
	if best == 0 {
		return &best, nil
	}
	return &best, &name
}

// riskLevel names a max_score: none (null or 0), low (1–39), medium (40–69), high (70–89),
// severe (90–100); the decay's 25, 50, 75 and 100 are low, medium, high and severe.
func riskLevel(score *int) string {
	switch {
	case score == nil || *score <= 0:
		return "none"
	case *score < 40:
		return "low"
	case *score < 70:
		return "medium"
	case *score < 90:
		return "high"
	}
	return "severe"
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// addressRiskView renders a scored address.
func (s *Service) addressRiskView(t Target, hits []riskHit, f store.RiskFacts, maxHop int) AddressRisk {
	v := AddressRisk{Address: t.Address, ChainType: string(t.ChainType), MaxHopReached: maxHop,
		TopSources: []RiskSource{}, UpdatedAt: render.Timestamp(s.now())}
	cats := categoryMaxima(hits)
	v.CategoryScores.fill(f.Present, cats[0])
	v.MaxScore, v.GreatestRiskCategory = greatest(cats[0], f.Present)
	v.MaxScoreBackward, v.GreatestRiskCategoryBackward = greatest(cats[1], f.Present)
	v.MaxScoreForward, v.GreatestRiskCategoryForward = greatest(cats[2], f.Present)
	v.RiskLevel = riskLevel(v.MaxScore)
	if f.Present["sanctions"] {
		one := 0
		for _, h := range hits {
			if h.category == "sanctions" && h.hop <= 1 {
				one = max(one, h.score)
			}
		}
		v.Sanctioned1HopScore = &one
	}
	// Each seed counts once per direction, with its riskiest category (hits are riskiest first).
	seen := map[[2]string]bool{}
	for _, h := range hits {
		if h.direction == riskSelf {
			v.IsSeed = true
		}
		if v.HopDistance == nil || h.hop < *v.HopDistance {
			hop := h.hop
			v.HopDistance = &hop
		}
		k := [2]string{h.seed, h.direction}
		if h.direction == riskSelf || seen[k] {
			continue
		}
		seen[k] = true
		total := f.InUSD
		if h.direction == riskBackward {
			v.RiskWeightedIncomingUSD += h.usd * float64(h.score) / 100
		} else {
			total = f.OutUSD
			v.RiskWeightedOutgoingUSD += h.usd * float64(h.score) / 100
		}
		if len(v.TopSources) < riskTopSources {
			pct := 0.0
			if total > 0 {
				pct = math.Round(10000*math.Min(h.usd/total, 1)) / 100
			}
			v.TopSources = append(v.TopSources, RiskSource{SeedAddress: h.seed, RiskCategory: h.category,
				Direction: h.direction, HopDistance: h.hop, ContributionUSD: h.usd, ContributionPct: pct})
		}
	}
	return v
}

// riskTarget reads an address of a risk route: its chain type from its format (the first
// configured chain of a type whose format it has, as the address routes detect it). One that
// fits no configured chain is invalid input naming field.
func (s *Service) riskTarget(field, raw string) (Target, error) {
	t, err := ParseTarget(s.Chains, raw, "")
	if err != nil {
		return Target{}, invalid(field, "%q is not a valid address on any configured chain", short(raw))
	}
	return t, nil
}

// AddressRisk scores one address.
func (s *Service) AddressRisk(ctx context.Context, raw string) (AddressRisk, error) {
	t, err := s.riskTarget("address", raw)
	if err != nil {
		return AddressRisk{}, err
	}
	r, err := s.scoreAddress(ctx, t)
	return r.view, err
}

// AddressRiskBatch scores 1..RiskMaxBatch addresses, keyed by the address as given (each
// distinct address once).
func (s *Service) AddressRiskBatch(ctx context.Context, raw []string) (map[string]AddressRisk, error) {
	if err := batchSize("addresses", "addresses", len(raw), RiskMaxBatch); err != nil {
		return nil, err
	}
	targets := map[string]Target{}
	var keys []string
	for i, r := range raw {
		if _, ok := targets[r]; ok {
			continue
		}
		t, err := s.riskTarget("addresses["+strconv.Itoa(i)+"]", r)
		if err != nil {
			return nil, err
		}
		targets[r] = t
		keys = append(keys, r)
	}
	ts := make([]Target, len(keys))
	for i, k := range keys {
		ts[i] = targets[k]
	}
	results, err := s.scoreAll(ctx, ts)
	if err != nil {
		return nil, err
	}
	out := make(map[string]AddressRisk, len(keys))
	for i, k := range keys {
		out[k] = results[i].view
	}
	return out, nil
}

// AddressRiskPaths lists how each seed the search reached was reached (the address's own
// categories as direction "self", a path of the address alone), riskiest first.
func (s *Service) AddressRiskPaths(ctx context.Context, raw string) (AddressRiskPaths, error) {
	t, err := s.riskTarget("address", raw)
	if err != nil {
		return AddressRiskPaths{}, err
	}
	r, err := s.scoreAddress(ctx, t)
	if err != nil {
		return AddressRiskPaths{}, err
	}
	out := AddressRiskPaths{Address: t.Address, Paths: []RiskPath{}}
	for _, h := range r.hits {
		p := RiskPath{ChainType: string(t.ChainType), SeedAddress: h.seed, RiskCategory: h.category,
			Direction: h.direction, HopDistance: h.hop, Score: h.score}
		if h.direction != riskSelf {
			usd := h.usd
			p.ContributionUSD = &usd
		}
		for i, a := range h.path {
			p.PathNodes = append(p.PathNodes, PathNode{Address: a, HopDistance: i})
		}
		out.Paths = append(out.Paths, p)
	}
	return out, nil
}

// batchSize checks a batch body's list: 1..most entries.
func batchSize(field, what string, n, most int) error {
	if n == 0 {
		return invalid(field, "give at least one of the %s", what)
	}
	if n > most {
		return invalid(field, "at most %d %s per call, got %d", most, what, n)
	}
	return nil
}

// normalizedKeys are a user entity's (or a caller's additions') distinct addresses, by chain
// type, normalised, in a stable order; those their chain type does not accept are left out.
func normalizedKeys(byType map[string][]string) []store.AddressKey {
	var out []store.AddressKey
	seen := map[store.AddressKey]bool{}
	for ct, list := range byType {
		ty, err := chains.ParseType(ct)
		if err != nil {
			continue
		}
		for _, a := range list {
			n, err := address.Normalize(ty, a)
			k := store.AddressKey{ChainType: string(ty), Address: n}
			if err == nil && !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ChainType != out[j].ChainType {
			return out[i].ChainType < out[j].ChainType
		}
		return out[i].Address < out[j].Address
	})
	return out
}
