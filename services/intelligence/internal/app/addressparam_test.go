package app

import (
	"errors"
	"testing"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
)

func TestParseTarget(t *testing.T) {
	all, _ := chains.NewSet(nil)
	some, _ := chains.NewSet([]string{"base", "bitcoin"})
	cases := []struct {
		set        *chains.Set
		raw, chain string
		want       Target
		status     int
	}{
		{all, "0x28C6C06298D514DB089934071355E5743BF21D60", "", Target{"ethereum", chains.TypeEVM, "0x28c6c06298d514db089934071355e5743bf21d60"}, 0},
		{some, "0x28c6c06298d514db089934071355e5743bf21d60", "", Target{"base", chains.TypeEVM, "0x28c6c06298d514db089934071355e5743bf21d60"}, 0},
		{all, "0x28c6c06298d514db089934071355e5743bf21d60", "polygon", Target{"polygon", chains.TypeEVM, "0x28c6c06298d514db089934071355e5743bf21d60"}, 0},
		{all, "BC1QM34LSC65ZPW79LXES69ZKQMK6EE3EWF0J77S3H", "", Target{"bitcoin", chains.TypeBitcoin, "bc1qm34lsc65zpw79lxes69zkqmk6ee3ewf0j77s3h"}, 0},
		{all, "TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi", "", Target{"tron", chains.TypeTron, "TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi"}, 0},
		{some, "TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi", "", Target{}, 404},
		{all, "0x28c6c06298d514db089934071355e5743bf21d60", "bitcoin", Target{}, 404},
		{some, "0x28c6c06298d514db089934071355e5743bf21d60", "ethereum", Target{}, 400},
		{all, "0x28c6c06298d514db089934071355e5743bf21d60", "nochain", Target{}, 400},
		{all, "", "", Target{}, 404},
		{all, " 0x28c6c06298d514db089934071355e5743bf21d60", "", Target{}, 404},
	}
	for _, c := range cases {
		got, err := ParseTarget(c.set, c.raw, c.chain)
		if c.status != 0 {
			if status(err) != c.status {
				t.Errorf("ParseTarget(%q, %q) = %v, %v; want status %d", c.raw, c.chain, got, err, c.status)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseTarget(%q, %q) = %v, %v; want %v", c.raw, c.chain, got, err, c.want)
		}
	}
	ts, err := ParseTargetsAll(some, "0x28c6c06298d514db089934071355e5743bf21d60", nil)
	if err != nil || len(ts) != 1 || ts[0].Chain != "base" {
		t.Errorf("ParseTargetsAll = %v, %v", ts, err)
	}
}

// FuzzParseTarget checks that address path parsing never panics, answers only 400 or 404 on
// bad input, and that what it accepts is canonical: parsing the result again gives the same
// target, valid for the chain's type.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []struct{ raw, chain string }{
		{"0x28c6c06298d514db089934071355e5743bf21d60", ""}, {"0x28C6c06298d514Db089934071355E5743bf21d60", "ethereum"},
		{"34xp4vRoCGJym3xR7yCVPFHoCNxv4Twseo", ""}, {"bc1qm34lsc65zpw79lxes69zkqmk6ee3ewf0j77s3h", "bitcoin"},
		{"TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi", "tron"}, {"41" + "d8dd39e2dea27a40001884901735e3940829bb44", ""},
		{"So11111111111111111111111111111111111111112", "solana"}, {"DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L", "dogecoin"},
		{"0:" + "83dfd552e63729b472fcbcc8c45ebcc6691702558b68ec7527e1ba403a0f31a8", "ton"},
		{"EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N", ""}, {"", ""}, {"x", "ethereum"}, {"0x", "base"},
	} {
		f.Add(s.raw, s.chain)
	}
	set, _ := chains.NewSet(nil)
	f.Fuzz(func(t *testing.T, raw, chain string) {
		got, err := ParseTarget(set, raw, chain)
		if err != nil {
			if st := status(err); (st != 400 && st != 404) || err.Error() == "" {
				t.Fatalf("ParseTarget(%q, %q): error %v is not a 400/404 with a message", raw, chain, err)
			}
			return
		}
		c, ok := chains.Lookup(got.Chain)
		if !ok || c.Type != got.ChainType {
			t.Fatalf("ParseTarget(%q, %q) = %v: chain and type disagree", raw, chain, got)
		}
		if !address.Valid(got.ChainType, got.Address) {
			t.Fatalf("ParseTarget(%q, %q) = %v: address not valid for its type", raw, chain, got)
		}
		again, err := ParseTarget(set, got.Address, got.Chain)
		if err != nil || again != got {
			t.Fatalf("ParseTarget not idempotent: %v then %v, %v", got, again, err)
		}
		all, err := ParseTargetsAll(set, raw, nil)
		if err != nil {
			t.Fatalf("ParseTargetsAll(%q) failed although ParseTarget accepted it: %v", raw, err)
		}
		found := false
		for _, a := range all {
			found = found || (a.ChainType == got.ChainType && a.Address == got.Address)
		}
		if chain == "" && !found {
			t.Fatalf("ParseTargetsAll(%q) = %v misses %v", raw, all, got)
		}
	})
}

// status is the status internal/http answers a domain error with (0: not a domain error).
func status(err error) int {
	var inv *InvalidInputError
	var nf *NotFoundError
	switch {
	case errors.As(err, &inv):
		return 400
	case errors.As(err, &nf):
		return 404
	}
	return 0
}
