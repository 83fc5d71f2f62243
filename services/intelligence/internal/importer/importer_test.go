package importer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/sharedtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
)

func TestParseCuratedDedupesAndReportsConflicts(t *testing.T) {
	doc := `{"entities":[{"id":"a","name":"A"},{"id":"b","name":"B"}],"addresses":[
		{"chainType":"evm","address":"0x1111111111111111111111111111111111111111","entity":"a","label":"one","confidence":0.4},
		{"chain":"base","address":"0x1111111111111111111111111111111111111111","entity":"b","confidence":0.6,"tags":[{"id":"t","params":"p"}]},
		{"address":"34xp4vRoCGJym3xR7yCVPFHoCNxv4Twseo","label":"detected bitcoin"}]}`
	b, err := ParseCurated(strings.NewReader(doc), "curated")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Claims) != 2 || b.Claims[0].EntityID != "b" || b.Claims[0].Label != "one" || len(b.Claims[0].Tags) != 1 {
		t.Fatalf("claims: %+v", b.Claims)
	}
	if b.Claims[1].ChainType != "bitcoin" {
		t.Fatalf("detected chain type: %+v", b.Claims[1])
	}
	if len(b.Conflicts) != 1 || b.Conflicts[0].Winner != "b" || b.Conflicts[0].Loser != "a" {
		t.Fatalf("conflicts: %+v", b.Conflicts)
	}
}

func TestGraphSenseTagPack(t *testing.T) {
	pack := `title: Test pack
label: test label
category: exchange
confidence: service_data
actor: Some_Exchange
tags:
- address: '0xBE0EB53F46CD790CD13851D5EFF43D12404D33E8'
  currency: ETH
- address: 'TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi'
  currency: USDT
  label: tron usdt
- address: 'LcHK5vLJ6NFHsy5iFSDMBJfAPdR8eAqXKt'
  currency: LTC
- address: 'not-btc'
  currency: BTC
`
	b, err := ParseGraphSenseTagPack(strings.NewReader(pack), "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Claims) != 2 || b.Claims[0].EntityID != "some_exchange" || b.Claims[0].Address != "0xbe0eb53f46cd790cd13851d5eff43d12404d33e8" ||
		b.Claims[0].Confidence != 0.9 || b.Claims[0].Label != "test label" || b.Claims[1].ChainType != "tron" || b.Claims[1].Label != "tron usdt" {
		t.Fatalf("claims: %+v", b.Claims)
	}
	if len(b.Skipped) != 2 || len(b.Tags) != 1 || b.Tags[0].ID != "exchange" {
		t.Fatalf("skipped %v, tags %v", b.Skipped, b.Tags)
	}
}

// FuzzParseCurated checks that the curated parser never panics and that everything it accepts
// is canonical: valid entity ids, addresses normalised for their chain type, confidences in
// [0, 1], one claim per address.
func FuzzParseCurated(f *testing.F) {
	f.Add(`{"entities":[{"id":"binance","name":"Binance","type":"cex"}],"addresses":[{"chainType":"evm","address":"0x28c6c06298d514db089934071355e5743bf21d60","entity":"binance","label":"Hot Wallet 14","confidence":0.95,"tags":[{"id":"exchange-hot-wallet","params":""}]}],"tags":[{"id":"exchange-hot-wallet","label":"Exchange hot wallet","rank":10}]}`)
	f.Add(`{"addresses":[{"chain":"bitcoin","address":"bc1qm34lsc65zpw79lxes69zkqmk6ee3ewf0j77s3h","label":"x"}]}`)
	f.Add("chain_type,address,entity,label,confidence\nevm,0x28c6c06298d514db089934071355e5743bf21d60,binance,Hot,0.5\ntron,TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi,,label,\n")
	f.Add("\xEF\xBB\xBFchain_type,address,entity,label,confidence\n")
	f.Add(`{"addresses":[{"address":"0x28c6c06298d514db089934071355e5743bf21d60","entity":"a"},{"address":"0x28C6C06298D514DB089934071355E5743BF21D60","entity":"b","confidence":1}]}`)
	f.Add("")
	f.Add("{")
	f.Fuzz(func(t *testing.T, doc string) {
		b, err := ParseCurated(strings.NewReader(doc), "curated")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		seen := map[string]bool{}
		for _, e := range b.Entities {
			if !attribution.ValidEntityID(e.ID) {
				t.Fatalf("accepted entity id %q", e.ID)
			}
		}
		for _, c := range b.Claims {
			ct, err := chains.ParseType(c.ChainType)
			if err != nil {
				t.Fatalf("accepted chain type %q", c.ChainType)
			}
			n, err := address.Normalize(ct, c.Address)
			if err != nil || n != c.Address {
				t.Fatalf("accepted non-canonical %s address %q (%v)", ct, c.Address, err)
			}
			if !(c.Confidence >= 0 && c.Confidence <= 1) {
				t.Fatalf("accepted confidence %v", c.Confidence)
			}
			if c.EntityID != "" && !attribution.ValidEntityID(c.EntityID) {
				t.Fatalf("accepted entity id %q", c.EntityID)
			}
			k := attribution.Key(c.ChainType, c.Address)
			if seen[k] {
				t.Fatalf("two claims for %s", k)
			}
			seen[k] = true
		}
	})
}

// FuzzParseGraphSenseTagPack checks that the tag-pack parser never panics and that every claim
// it keeps is canonical: a known chain type, a normalised address, a slug entity id and a
// confidence in [0, 1].
func FuzzParseGraphSenseTagPack(f *testing.F) {
	f.Add("title: t\nactor: binance\nconfidence: service_data\ncategory: exchange\ntags:\n- address: '0xBE0EB53F46CD790CD13851D5EFF43D12404D33E8'\n  currency: ETH\n")
	f.Add("title: US Treasury OFAC\ntags:\n- address: 3K35dyL85fR9ht7UgzPfd1gLRRXQtNTqE3\n  currency: BTC\n")
	f.Add("tags:\n- address: TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi\n  currency: USDT\n  actor: 'Some Actor!'\n  label: x\n")
	f.Add("tags: [1, 2]\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, doc string) {
		b, err := ParseGraphSenseTagPack(strings.NewReader(doc), "fuzz")
		if err != nil {
			return
		}
		for _, c := range b.Claims {
			ct, err := chains.ParseType(c.ChainType)
			if err != nil {
				t.Fatalf("claim on chain type %q", c.ChainType)
			}
			if n, err := address.Normalize(ct, c.Address); err != nil || n != c.Address {
				t.Fatalf("non-canonical %s address %q", ct, c.Address)
			}
			if c.EntityID != "" && !attribution.ValidEntityID(c.EntityID) {
				t.Fatalf("entity id %q", c.EntityID)
			}
			if !(c.Confidence >= 0 && c.Confidence <= 1) {
				t.Fatalf("confidence %v", c.Confidence)
			}
		}
	})
}

// The bundled GraphSense pack defi-protocols-csh tags the zero address as MakerDAO's faucet: the
// parser skips it, saying why, and keeps the pack's other MakerDAO addresses.
func TestGraphSenseSkipsTheZeroAddress(t *testing.T) {
	fh, err := os.Open(sharedtest.Path(t, filepath.Join("data", "labels", "graphsense", "defi-protocols-csh.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	b, err := ParseGraphSenseTagPack(fh, "defi-protocols-csh")
	if err != nil {
		t.Fatal(err)
	}
	maker := 0
	for _, c := range b.Claims {
		if _, ok := NotWallet(c.ChainType, c.Address); ok {
			t.Errorf("claim on %s kept: %+v", c.Address, c)
		}
		if c.EntityID == "maker" {
			maker++
		}
	}
	if maker == 0 {
		t.Error("no MakerDAO claim left")
	}
	want := "graphsense:defi-protocols-csh: evm 0x0000000000000000000000000000000000000000 is the zero address (the other side of every mint and burn), no one's wallet; not attributed"
	if !slices.Contains(b.Skipped, want) {
		t.Errorf("skipped %q\nwant it to list %q", b.Skipped, want)
	}
}

// Curated files, JSON and CSV, skip the zero and burn addresses with a reason instead of
// rejecting the file, and keep the other claims.
func TestCuratedSkipsNotWallets(t *testing.T) {
	docs := map[string]string{
		"json": `{"entities":[{"id":"a","name":"A"}],"addresses":[
			{"chainType":"evm","address":"0x0000000000000000000000000000000000000000","entity":"a"},
			{"chain":"base","address":"0x000000000000000000000000000000000000dEaD","label":"burn"},
			{"chainType":"evm","address":"0x1111111111111111111111111111111111111111","entity":"a"}]}`,
		"csv": "chain_type,address,entity,label,confidence\n" +
			"evm,0x0000000000000000000000000000000000000000,a,,\n" +
			"evm,0x000000000000000000000000000000000000DEAD,,burn,\n" +
			"evm,0x1111111111111111111111111111111111111111,a,,\n",
	}
	for format, doc := range docs {
		b, err := ParseCurated(strings.NewReader(doc), "curated")
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if len(b.Claims) != 1 || b.Claims[0].Address != "0x1111111111111111111111111111111111111111" {
			t.Errorf("%s: claims %+v", format, b.Claims)
		}
		want := []string{
			"curated: evm 0x0000000000000000000000000000000000000000 is the zero address (the other side of every mint and burn), no one's wallet; not attributed",
			"curated: evm 0x000000000000000000000000000000000000dead is the burn address 0x…dEaD, no one's wallet; not attributed",
		}
		if !slices.Equal(b.Skipped, want) {
			t.Errorf("%s: skipped %q\nwant %q", format, b.Skipped, want)
		}
	}
}

// GraphSense actors of risky categories get the entity types risk scores read as seeds
// (app.RiskCategories): a darknet market is darkweb though it is a market too, an NFT market
// stays market, the first known category still decides.
func TestActorTypesOfRiskCategories(t *testing.T) {
	for _, c := range []struct {
		categories []string
		want       string
	}{
		{[]string{"dark_web", "market"}, "darkweb"},
		{[]string{"market", "dark_web"}, "darkweb"},
		{[]string{"collectible", "market"}, "market"},
		{[]string{"hacking"}, "hacker"},
		{[]string{"phishing", "ransomware", "sanction", "service_hack"}, "ransomware"},
		{[]string{"social_engineering"}, "scam"},
		{[]string{"organization", "sanction"}, "sanctioned"},
		{[]string{"service", "defi", "exchange", "sanction"}, "cex"},
		{[]string{"organization", "mixing_service"}, "mixer"},
	} {
		if got := actorType(c.categories); got != c.want {
			t.Errorf("%v: %q, want %q", c.categories, got, c.want)
		}
	}
}
