package app

import (
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
)

// FuzzParseChainAddress: a {chain}/{address} pair either parses into a canonical target on a
// configured chain (parsing it again gives the same target; ParseTarget with that chain agrees)
// or is a 400 naming the chain or a 404 naming the address.
func FuzzParseChainAddress(f *testing.F) {
	for _, s := range []struct{ chain, raw string }{
		{"ethereum", "0x28C6c06298d514Db089934071355E5743bf21d60"}, {"bitcoin", "bc1qm34lsc65zpw79lxes69zkqmk6ee3ewf0j77s3h"},
		{"tron", "TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi"}, {"solana", "So11111111111111111111111111111111111111112"},
		{"ton", "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N"}, {"", "0x00"}, {"nochain", "x"}, {"base", ""},
	} {
		f.Add(s.chain, s.raw)
	}
	set, _ := chains.NewSet(nil)
	f.Fuzz(func(t *testing.T, chain, raw string) {
		got, err := ParseChainAddress(set, chain, raw)
		if err != nil {
			st := status(err)
			if !(st == 400 && strings.HasPrefix(err.Error(), "chain: ") || st == 404 && err.Error() != "") {
				t.Fatalf("ParseChainAddress(%q, %q): error %v is not a 400 naming chain or a 404", chain, raw, err)
			}
			return
		}
		if got.Chain != chain || !set.Has(got.Chain) {
			t.Fatalf("ParseChainAddress(%q, %q) = %v: not the chain asked for", chain, raw, got)
		}
		if c, _ := chains.Lookup(got.Chain); c.Type != got.ChainType || !address.Valid(got.ChainType, got.Address) {
			t.Fatalf("ParseChainAddress(%q, %q) = %v: address not valid for the chain's type", chain, raw, got)
		}
		again, err := ParseChainAddress(set, got.Chain, got.Address)
		if err != nil || again != got {
			t.Fatalf("ParseChainAddress not idempotent: %v then %v, %v", got, again, err)
		}
		if pt, err := ParseTarget(set, raw, chain); err != nil || pt != got {
			t.Fatalf("ParseTarget(%q, %q) = %v, %v; ParseChainAddress gave %v", raw, chain, pt, err, got)
		}
	})
}

// FuzzBatchTargets: a batch's addresses (one a line), chain, /all flag and chain filter either
// give every distinct address as given its targets (valid, on the requested chains: the filter
// bounds the detected chain of a batch without chain too) or are a 400 naming the addresses, an
// index of them, the chain or the chains.
func FuzzBatchTargets(f *testing.F) {
	f.Add("0x28c6c06298d514db089934071355e5743bf21d60\n0x28C6c06298d514Db089934071355E5743bf21d60", "", false, "")
	f.Add("0x28c6c06298d514db089934071355e5743bf21d60", "", true, "base,ethereum")
	f.Add("bc1qm34lsc65zpw79lxes69zkqmk6ee3ewf0j77s3h\nx", "bitcoin", false, "")
	f.Add("", "nochain", false, "")
	f.Add("TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi", "", true, "tron")
	f.Add("0x28c6c06298d514db089934071355e5743bf21d60", "", false, "base,polygon")
	f.Add("0x28c6c06298d514db089934071355e5743bf21d60", "", false, "notachain")
	set, _ := chains.NewSet(nil)
	s := &Service{Chains: set}
	f.Fuzz(func(t *testing.T, lines, chain string, all bool, filter string) {
		var raw []string
		if lines != "" {
			raw = strings.Split(lines, "\n")
		}
		var only map[string]bool
		if filter != "" {
			only = map[string]bool{}
			for _, c := range strings.Split(filter, ",") {
				only[c] = true
			}
		}
		keys, targets, err := s.batchTargets(raw, chain, all, only)
		if err != nil {
			if msg := err.Error(); status(err) != 400 || !(strings.HasPrefix(msg, "addresses") || strings.HasPrefix(msg, "chain: ") || strings.HasPrefix(msg, "chains: ")) {
				t.Fatalf("batchTargets(%q, %q, %v, %q): error %v is not a 400 naming its parameter", raw, chain, all, filter, err)
			}
			return
		}
		if len(keys) != len(targets) || len(keys) == 0 {
			t.Fatalf("batchTargets: %d keys, %d target lists", len(keys), len(targets))
		}
		seen := map[string]bool{}
		for i, k := range keys {
			if seen[k] || !contains(raw, k) || len(targets[i]) == 0 {
				t.Fatalf("batchTargets(%q): key %q repeated, not given, or without targets", raw, k)
			}
			seen[k] = true
			for _, tg := range targets[i] {
				if !set.Has(tg.Chain) || !address.Valid(tg.ChainType, tg.Address) || all && only != nil && !only[tg.Chain] ||
					!all && chain != "" && tg.Chain != chain || !all && chain == "" && only != nil && !only[tg.Chain] {
					t.Fatalf("batchTargets(%q, %q, %v, %q): target %v of %q", raw, chain, all, filter, tg, k)
				}
			}
		}
		if len(seen) != len(distinct(raw)) {
			t.Fatalf("batchTargets(%q): %d keys for %d distinct addresses", raw, len(seen), len(distinct(raw)))
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func distinct(list []string) map[string]bool {
	out := map[string]bool{}
	for _, x := range list {
		out[x] = true
	}
	return out
}

// TestBatchTargetsChainBesideChains: a batch's chain is looked up among every configured chain,
// whatever its chains filter says (the filter bounds only the detection of a batch without one).
func TestBatchTargetsChainBesideChains(t *testing.T) {
	set, _ := chains.NewSet(nil)
	s := &Service{Chains: set}
	keys, targets, err := s.batchTargets([]string{"0x28c6c06298d514db089934071355e5743bf21d60"}, "base", false, map[string]bool{"ethereum": true})
	if err != nil || len(keys) != 1 || len(targets[0]) != 1 || targets[0][0].Chain != "base" {
		t.Fatalf("chain=base beside chains=ethereum: %v %v %v, want one target on base", keys, targets, err)
	}
	if _, _, err := s.batchTargets([]string{"0x28c6c06298d514db089934071355e5743bf21d60"}, "nochain", false, map[string]bool{"ethereum": true}); err == nil || !strings.HasPrefix(err.Error(), "chain: ") {
		t.Fatalf("an unknown chain beside chains: %v, want a 400 naming chain", err)
	}
}
