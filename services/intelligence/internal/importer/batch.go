// Package importer parses attribution sources into a Batch the store applies in one
// transaction: the operator's curated format (JSON or CSV, docs/contracts.md) and GraphSense
// actor packs and tag packs (YAML). Parsing does no I/O besides reading its input.
package importer

import (
	"fmt"
	"strings"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
)

// Batch is everything one source says.
type Batch struct {
	Source   string // claims of a source replace that source's earlier claims on the same addresses
	Entities []attribution.Entity
	Tags     []attribution.Tag
	Claims   []Claim
	// Skipped lists records left out (an unsupported currency, an invalid address in a
	// third-party pack; in any format, a claim on an address that is no one's wallet); curated
	// files with an invalid record are rejected whole instead.
	Skipped []string
	// Conflicts lists addresses claimed by two entities within the batch, and which one won.
	Conflicts []Conflict
}

// Claim is what a source says about one address.
type Claim struct {
	ChainType  string
	Address    string
	EntityID   string // "" for a label-only claim
	Label      string
	Confidence float32
	Tags       []TagRef
}

// TagRef is a tag put on an address, with its parameter.
type TagRef struct {
	ID     string `json:"id"`
	Params string `json:"params"`
}

// Conflict is an address two entities claim: Winner kept, Loser dropped.
type Conflict struct {
	ChainType        string  `json:"chainType"`
	Address          string  `json:"address"`
	Winner           string  `json:"winner"`
	WinnerSource     string  `json:"winnerSource"`
	WinnerConfidence float32 `json:"winnerConfidence"`
	Loser            string  `json:"loser"`
	LoserSource      string  `json:"loserSource"`
	LoserConfidence  float32 `json:"loserConfidence"`
}

// normalizeAddress checks addr for a chain type given as chainType or as a chain name.
func normalizeAddress(chainType, chain, addr string) (chains.Type, string, error) {
	var t chains.Type
	switch {
	case chainType != "" && chain != "":
		return "", "", fmt.Errorf("give chainType or chain, not both")
	case chainType != "":
		pt, err := chains.ParseType(chainType)
		if err != nil {
			return "", "", err
		}
		t = pt
	case chain != "":
		c, ok := chains.Lookup(chain)
		if !ok {
			return "", "", fmt.Errorf("unknown chain %q", chain)
		}
		t = c.Type
	default:
		dt, ok := address.Detect(addr)
		if !ok {
			return "", "", fmt.Errorf("address %q is valid on no supported chain type; give chainType", params.Trunc(addr))
		}
		t = dt
	}
	n, err := address.Normalize(t, addr)
	if err != nil {
		return "", "", err
	}
	return t, n, nil
}

// NotWallet says why an address (normalised) is no one's wallet (address.NotWallet: the zero
// and burn addresses), or false when it may be one. A claim on one would attribute every mint or
// burn to its entity (a GraphSense pack tags the zero address as MakerDAO's faucet), so every
// import format skips them, listing each in Skipped. Migrations 00015 and 00016 remove the
// claims imported before.
func NotWallet(chainType, addr string) (string, bool) {
	return address.NotWallet(chains.Type(chainType), addr)
}

// dropNotWallets leaves out the claims on notWallets, listing each in Skipped.
func (b *Batch) dropNotWallets() {
	out := b.Claims[:0]
	for _, c := range b.Claims {
		if why, ok := NotWallet(c.ChainType, c.Address); ok {
			b.Skipped = append(b.Skipped, fmt.Sprintf("%s: %s %s is %s, no one's wallet; not attributed", b.Source, c.ChainType, c.Address, why))
			continue
		}
		out = append(out, c)
	}
	b.Claims = out
}

// dedupe keeps one claim per address (the most confident; the first on a tie), merging tags,
// and records conflicts between entities.
func (b *Batch) dedupe() {
	idx := map[string]int{}
	out := b.Claims[:0]
	for _, c := range b.Claims {
		k := attribution.Key(c.ChainType, c.Address)
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, c)
			continue
		}
		prev := &out[i]
		tags := mergeTags(prev.Tags, c.Tags)
		if c.EntityID != "" && prev.EntityID != "" && c.EntityID != prev.EntityID {
			w, l := *prev, c
			if c.Confidence > prev.Confidence {
				w, l = c, *prev
			}
			b.Conflicts = append(b.Conflicts, Conflict{ChainType: c.ChainType, Address: c.Address,
				Winner: w.EntityID, WinnerSource: b.Source, WinnerConfidence: w.Confidence,
				Loser: l.EntityID, LoserSource: b.Source, LoserConfidence: l.Confidence})
		}
		if c.Confidence > prev.Confidence || (prev.EntityID == "" && c.EntityID != "") {
			label := c.Label
			if label == "" {
				label = prev.Label
			}
			*prev = c
			prev.Label = label
		} else if prev.Label == "" {
			prev.Label = c.Label
		}
		prev.Tags = tags
	}
	b.Claims = out
}

func mergeTags(a, b []TagRef) []TagRef {
	out := append([]TagRef(nil), a...)
	for _, t := range b {
		dup := false
		for _, u := range out {
			if u == t {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, t)
		}
	}
	return out
}

// problems collects validation errors, keeping the first few.
type problems struct {
	list  []string
	count int
}

func (p *problems) addf(format string, args ...any) {
	p.count++
	if len(p.list) < 20 {
		p.list = append(p.list, fmt.Sprintf(format, args...))
	}
}

func (p *problems) err(what string) error {
	if p.count == 0 {
		return nil
	}
	more := ""
	if p.count > len(p.list) {
		more = fmt.Sprintf(" (and %d more)", p.count-len(p.list))
	}
	return fmt.Errorf("%s: %d problems: %s%s", what, p.count, strings.Join(p.list, "; "), more)
}
