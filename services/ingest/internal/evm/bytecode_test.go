package evm

import (
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

func TestProxyTargets(t *testing.T) {
	impl := "0xbebebebebebebebebebebebebebebebebebebebe"
	clone := common.FromHex("0x363d3d373d3d3d363d73" + impl[2:] + "5af43d82803e903d91602b57fd5bf3")
	if got := MinimalProxyTarget(clone); got != impl {
		t.Errorf("clone target %q", got)
	}
	if got := MinimalProxyTarget(append(clone, 0)); got != "" {
		t.Errorf("longer code is not a clone: %q", got)
	}
	if got := ImplementationFromSlot(common.HexToHash(impl)); got != impl {
		t.Errorf("slot %q", got)
	}
	if got := ImplementationFromSlot(common.Hash{}); got != "" {
		t.Errorf("empty slot %q", got)
	}
	if got := ImplementationFromSlot(common.HexToHash("0x01" + impl[2:] + "000000000000000000000000")); got != "" {
		t.Errorf("a word that is not an address: %q", got)
	}
}

// An EIP-7702 delegation designator (0xef0100 and an address) is an EOA's, not contract code;
// the same prefix with another length is.
func TestIsContractCode(t *testing.T) {
	deleg := common.FromHex("0xef0100" + "bebebebebebebebebebebebebebebebebebebebe")
	for _, c := range []struct {
		code []byte
		want bool
	}{{nil, false}, {deleg, false}, {append(deleg, 0), true}, {deleg[:22], true}, {common.FromHex("0x6080"), true}} {
		if got := IsContractCode(c.code); got != c.want {
			t.Errorf("%x: %v, want %v", c.code, got, c.want)
		}
	}
}
