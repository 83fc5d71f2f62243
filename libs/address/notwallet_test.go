package address_test

import (
	"testing"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
)

// Every listed address is in the canonical form Normalize gives, so comparing a normalised
// address with the list finds it; Tron's zero address is the base58 form of 41 and 20 zero bytes.
func TestNotWalletsAreCanonical(t *testing.T) {
	for _, n := range address.NotWallets() {
		if got, err := address.Normalize(n.Type, n.Address); err != nil || got != n.Address {
			t.Errorf("%s %s: normalised %q, %v", n.Type, n.Address, got, err)
		}
	}
	if got, err := address.Normalize(chains.TypeTron, "41"+"0000000000000000000000000000000000000000"); err != nil {
		t.Fatal(err)
	} else if _, ok := address.NotWallet(chains.TypeTron, got); !ok {
		t.Errorf("tron zero address %s not a NotWallet", got)
	}
	if _, ok := address.NotWallet(chains.TypeEVM, "0x0000000000000000000000000000000000000001"); ok {
		t.Error("0x…01 reported as no one's wallet")
	}
}
