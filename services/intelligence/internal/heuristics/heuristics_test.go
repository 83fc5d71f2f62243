package heuristics

import (
	"reflect"
	"testing"

	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

func TestDetectDeposits(t *testing.T) {
	p := DefaultParams()
	cands := []store.SweepCandidate{
		{Chain: "ethereum", ChainType: "evm", Address: "0xd1", Exchange: "acme", HotOut: 1, OutDegree: 1, Senders: 1},
		// Sends mostly elsewhere: a wallet that once paid a hot wallet.
		{Chain: "ethereum", ChainType: "evm", Address: "0xw", Exchange: "acme", HotOut: 1, OutDegree: 5, Senders: 3},
		// Nobody paid into it: an issuer funding hot wallets.
		{Chain: "ethereum", ChainType: "evm", Address: "0xt", Exchange: "acme", HotOut: 1, OutDegree: 1, Senders: 0},
		// Sweeps to two exchanges equally.
		{Chain: "ethereum", ChainType: "evm", Address: "0xa", Exchange: "acme", HotOut: 1, OutDegree: 2, Senders: 1},
		{Chain: "ethereum", ChainType: "evm", Address: "0xa", Exchange: "bolt", HotOut: 1, OutDegree: 2, Senders: 1},
		// Detected for different exchanges on two EVM chains: left out.
		{Chain: "ethereum", ChainType: "evm", Address: "0xc", Exchange: "acme", HotOut: 1, OutDegree: 1, Senders: 1},
		{Chain: "base", ChainType: "evm", Address: "0xc", Exchange: "bolt", HotOut: 1, OutDegree: 1, Senders: 1},
		// The same exchange on two chains: one deposit address.
		{Chain: "ethereum", ChainType: "evm", Address: "0xe", Exchange: "acme", HotOut: 2, OutDegree: 2, Senders: 1},
		{Chain: "base", ChainType: "evm", Address: "0xe", Exchange: "acme", HotOut: 1, OutDegree: 1, Senders: 2},
		{Chain: "tron", ChainType: "tron", Address: "Tx", Exchange: "bolt", HotOut: 4, OutDegree: 5, Senders: 9},
		// The zero address minting to a hot wallet: no one's wallet, never a deposit address.
		{Chain: "ethereum", ChainType: "evm", Address: "0x0000000000000000000000000000000000000000", Exchange: "acme", HotOut: 1, OutDegree: 1, Senders: 1},
		{Chain: "tron", ChainType: "tron", Address: "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb", Exchange: "bolt", HotOut: 1, OutDegree: 1, Senders: 1},
	}
	got := DetectDeposits(cands, p)
	want := []Deposit{
		{ChainType: "evm", Address: "0xd1", Exchange: "acme", chainsSeen: []string{"ethereum"}},
		{ChainType: "evm", Address: "0xe", Exchange: "acme", chainsSeen: []string{"base", "ethereum"}},
		{ChainType: "tron", Address: "Tx", Exchange: "bolt", chainsSeen: []string{"tron"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestClustersMergeCustomersAcrossDeposits(t *testing.T) {
	deps := []Deposit{{ChainType: "evm", Address: "d1"}, {ChainType: "evm", Address: "d2"}, {ChainType: "evm", Address: "d3"}, {ChainType: "evm", Address: "d4"}}
	senders := []store.Sender{
		{ChainType: "evm", Deposit: "d1", Sender: "c1"}, {ChainType: "evm", Deposit: "d2", Sender: "c1"},
		{ChainType: "evm", Deposit: "d3", Sender: "c3"},
		{ChainType: "evm", Deposit: "d3", Sender: "hot-of-other-exchange", Attributed: true},
		{ChainType: "evm", Deposit: "d1", Sender: "d4"}, // a deposit address never joins another's cluster
		// Mints into d3 and d4: the zero address joins neither to the other.
		{ChainType: "evm", Deposit: "d3", Sender: "0x0000000000000000000000000000000000000000"},
		{ChainType: "evm", Deposit: "d4", Sender: "0x0000000000000000000000000000000000000000"},
	}
	c := Clusters(deps, senders)
	if c["evm:c1"] == "" || c["evm:c1"] != c["evm:d1"] || c["evm:c1"] != c["evm:d2"] || c["evm:c3"] != c["evm:d3"] || c["evm:c3"] == c["evm:c1"] {
		t.Fatalf("clusters %v", c)
	}
	if _, ok := c["evm:hot-of-other-exchange"]; ok {
		t.Fatal("an attributed sender joined a cluster")
	}
	if _, ok := c["evm:0x0000000000000000000000000000000000000000"]; ok {
		t.Fatal("the zero address joined a cluster")
	}
	if _, ok := c["evm:d4"]; ok {
		t.Fatal("a lone deposit address got a cluster")
	}
	// Ids are stable: the same input gives the same ids.
	if again := Clusters(deps, senders); !reflect.DeepEqual(again, c) {
		t.Fatal("cluster ids are not deterministic")
	}
}
