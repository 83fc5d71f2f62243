package evm

import (
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

func TestFunctionSighashes(t *testing.T) {
	for _, c := range []struct {
		name string
		code string
		want []string
	}{
		{"none", "0x", nil},
		// DUP1 PUSH4 a9059cbb EQ PUSH2 0040 JUMPI, DUP1 PUSH4 70a08231 EQ ..., and the first again.
		{"dispatcher", "0x8063a9059cbb146100405780637" + "0a082311461004057806363a9059cbb1461004057", []string{"0x70a08231", "0xa9059cbb"}},
		// PUSH4 followed by GT (a binary-search pivot) is not a comparison with the selector.
		{"pivot", "0x806370a0823111610040578063a9059cbb14", []string{"0xa9059cbb"}},
		// PUSH32 data holding 63 xx xx xx xx 14 is data, not code.
		{"push data", "0x7f63deadbeef1400000000000000000000000000000000000000000000000000000000", nil},
		// Code ending inside a PUSH4.
		{"truncated", "0x6312", nil},
	} {
		if got := FunctionSighashes(common.FromHex(c.code)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

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
