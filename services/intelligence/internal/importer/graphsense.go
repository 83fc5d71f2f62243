package importer

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
)

// GraphSense confidence levels (tagpack "confidence") mapped to our 0..1 confidence.
var graphSenseConfidence = map[string]float32{
	"ownership":      1.0,
	"authority_data": 0.95,
	"service_data":   0.9,
	"forensic":       0.8,
	"manual":         0.7,
	"heuristic":      0.6,
	"web_crawl":      0.5,
}

const defaultGraphSenseConfidence = 0.5

// Chain types an address tagged with a GraphSense currency may be on. Currencies of chains we
// do not index (LTC, BCH, XRP, ...) are skipped: their address formats overlap ours.
var graphSenseCurrency = map[string][]chains.Type{
	"BTC":   {chains.TypeBitcoin},
	"ETH":   {chains.TypeEVM},
	"BEP20": {chains.TypeEVM},
	"MATIC": {chains.TypeEVM},
	"AVAX":  {chains.TypeEVM},
	"FTM":   {chains.TypeEVM},
	"USDT":  {chains.TypeEVM, chains.TypeTron, chains.TypeSolana},
	"USDC":  {chains.TypeEVM, chains.TypeTron, chains.TypeSolana},
	"TRX":   {chains.TypeTron},
	"SOL":   {chains.TypeSolana},
	"DOGE":  {chains.TypeDogecoin},
	"TON":   {chains.TypeTON},
}

// Entity types from GraphSense categories, most specific first.
var graphSenseType = []struct{ category, typ string }{
	{"exchange", "cex"},
	{"defi_dex", "dex"},
	{"mixing_service", "mixer"},
	{"defi_lending", "lending"},
	{"defi_bridge", "bridge"},
	{"defi", "defi"},
	{"miner", "miner"},
	{"mining_service", "miner"},
	{"gambling", "gambling"},
	// A darknet market is also a "market" (as NFT markets are): the darknet category comes
	// first so its type says so (risk scores read it, docs/intelligence.md "Risk scores").
	{"dark_web", "darkweb"},
	{"market", "market"},
	{"wallet_service", "wallet"},
	{"payment_processor", "payments"},
	{"ransomware", "ransomware"},
	{"scam", "scam"},
	{"phishing", "scam"},
	{"social_engineering", "scam"},
	{"service_hack", "hacker"},
	{"hacking", "hacker"},
	{"sanction", "sanctioned"},
	{"organization", "organization"},
}

type gsActorPack struct {
	Actors []gsActor `yaml:"actors"`
}

type gsActor struct {
	ID         string   `yaml:"id"`
	Label      string   `yaml:"label"`
	Categories []string `yaml:"categories"`
	URI        string   `yaml:"uri"`
	Context    struct {
		TwitterHandle string `yaml:"twitter_handle"`
	} `yaml:"context"`
}

// ParseGraphSenseActors reads a GraphSense actor pack into entities. Actor ids become entity ids
// (lower-cased slugs); the first known category decides the entity type.
func ParseGraphSenseActors(r io.Reader) ([]attribution.Entity, []string, error) {
	var pack gsActorPack
	if err := yaml.NewDecoder(r).Decode(&pack); err != nil {
		return nil, nil, fmt.Errorf("actor pack: %w", err)
	}
	var out []attribution.Entity
	var skipped []string
	seen := map[string]bool{}
	for _, a := range pack.Actors {
		id := attribution.Slug(a.ID)
		if id == "" {
			skipped = append(skipped, fmt.Sprintf("actor %q: not usable as an entity id", params.Trunc(a.ID)))
			continue
		}
		if seen[id] {
			skipped = append(skipped, fmt.Sprintf("actor %q: listed twice", params.Trunc(a.ID)))
			continue
		}
		seen[id] = true
		e := attribution.Entity{ID: id, Name: a.Label, Type: actorType(a.Categories)}
		if e.Name == "" {
			e.Name = a.ID
		}
		if u := strings.TrimSpace(a.URI); u != "" {
			if !strings.Contains(u, "://") {
				u = "https://" + u
			}
			e.Website = u
		}
		if h := twitterHandle(a.Context.TwitterHandle, id); h != "" {
			e.Twitter = "https://twitter.com/" + h
		}
		out = append(out, e)
	}
	return out, skipped, nil
}

// twitterHandle picks one handle from GraphSense's comma-separated list: the one named like the
// actor when there is one, else the first.
func twitterHandle(list, id string) string {
	var first string
	for _, h := range strings.Split(list, ",") {
		h = strings.TrimPrefix(strings.TrimSpace(h), "@")
		if h == "" {
			continue
		}
		if strings.EqualFold(h, id) {
			return h
		}
		if first == "" {
			first = h
		}
	}
	return first
}

func actorType(categories []string) string {
	for _, m := range graphSenseType {
		for _, c := range categories {
			if c == m.category {
				return m.typ
			}
		}
	}
	if len(categories) > 0 {
		return attribution.Slug(categories[0])
	}
	return ""
}

type gsTagPack struct {
	Title      string  `yaml:"title"`
	Label      string  `yaml:"label"`
	Category   string  `yaml:"category"`
	Currency   string  `yaml:"currency"`
	Confidence string  `yaml:"confidence"`
	Actor      string  `yaml:"actor"`
	Tags       []gsTag `yaml:"tags"`
}

type gsTag struct {
	Address    string `yaml:"address"`
	Label      string `yaml:"label"`
	Category   string `yaml:"category"`
	Currency   string `yaml:"currency"`
	Confidence string `yaml:"confidence"`
	Actor      string `yaml:"actor"`
}

// Tags GraphSense categories map to (tag id, label, rank).
var graphSenseTags = map[string]attribution.Tag{
	"exchange":       {ID: "exchange", Label: "Exchange", Rank: 10},
	"mixing_service": {ID: "mixer", Label: "Mixer", Rank: 5},
	"defi":           {ID: "defi", Label: "DeFi protocol", Rank: 30},
	"defi_dex":       {ID: "dex", Label: "Decentralised exchange", Rank: 20},
	"ransomware":     {ID: "ransomware", Label: "Ransomware", Rank: 3},
	"scam":           {ID: "scam", Label: "Scam", Rank: 3},
}

var sanctionedTag = attribution.Tag{ID: "ofac-sanctioned", Label: "OFAC sanctioned", Rank: 1}

// ParseGraphSenseTagPack reads one GraphSense tag pack. Each tag becomes a claim of source
// "graphsense:<name>": the actor (the tag's, else the pack's) is the entity, the tag's label
// (else the pack's) the label, the confidence level mapped to 0..1; the category becomes a tag
// where we have one, and packs about the US Treasury's OFAC list tag their addresses
// "ofac-sanctioned". Tags on currencies we do not index and invalid addresses are skipped and
// listed in Skipped.
func ParseGraphSenseTagPack(r io.Reader, name string) (Batch, error) {
	var pack gsTagPack
	if err := yaml.NewDecoder(r).Decode(&pack); err != nil {
		return Batch{}, fmt.Errorf("tag pack %s: %w", name, err)
	}
	b := Batch{Source: "graphsense:" + name}
	usedTags := map[string]attribution.Tag{}
	sanctioned := strings.Contains(strings.ToUpper(pack.Title+" "+pack.Label), "OFAC")
	unsupported := map[string]int{}
	for i, t := range pack.Tags {
		cur := strings.ToUpper(strings.TrimSpace(first(t.Currency, pack.Currency)))
		types, ok := graphSenseCurrency[cur]
		if !ok {
			unsupported[cur]++
			continue
		}
		addr := strings.TrimSpace(t.Address)
		var ct chains.Type
		var norm string
		for _, ty := range types {
			a := addr
			if ty == chains.TypeEVM {
				// Packs carry mixed-case EVM addresses whose EIP-55 checksum does not always hold;
				// the case is cosmetic there.
				a = address.CanonicalHash(a)
			}
			if n, err := address.Normalize(ty, a); err == nil {
				ct, norm = ty, n
				break
			}
		}
		if norm == "" {
			b.Skipped = append(b.Skipped, fmt.Sprintf("%s tags[%d]: %q is not a valid %s address", name, i, params.Trunc(addr), cur))
			continue
		}
		actor := attribution.Slug(first(t.Actor, pack.Actor))
		conf, ok := graphSenseConfidence[first(t.Confidence, pack.Confidence)]
		if !ok {
			conf = defaultGraphSenseConfidence
		}
		c := Claim{ChainType: string(ct), Address: norm, EntityID: actor, Label: first(t.Label, pack.Label), Confidence: conf}
		if tag, ok := graphSenseTags[first(t.Category, pack.Category)]; ok {
			usedTags[tag.ID] = tag
			c.Tags = append(c.Tags, TagRef{ID: tag.ID})
		}
		if sanctioned {
			usedTags[sanctionedTag.ID] = sanctionedTag
			c.Tags = append(c.Tags, TagRef{ID: sanctionedTag.ID})
		}
		if c.EntityID == "" && c.Label == "" && len(c.Tags) == 0 {
			b.Skipped = append(b.Skipped, fmt.Sprintf("%s tags[%d]: no actor, label or category", name, i))
			continue
		}
		b.Claims = append(b.Claims, c)
	}
	curs := make([]string, 0, len(unsupported))
	for c := range unsupported {
		curs = append(curs, c)
	}
	sort.Strings(curs)
	for _, c := range curs {
		b.Skipped = append(b.Skipped, fmt.Sprintf("%s: %d tags on currency %q, which is not indexed", name, unsupported[c], c))
	}
	ids := make([]string, 0, len(usedTags))
	for id := range usedTags {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		b.Tags = append(b.Tags, usedTags[id])
	}
	b.dropNotWallets()
	b.dedupe()
	return b, nil
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
