package evm

import (
	"bytes"
	"context"
	"fmt"

	"github.com/chainintel/chainintel/libs/evmcode"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// EIP1967ImplementationSlot is bytes32(uint256(keccak256("eip1967.proxy.implementation")) - 1),
// where EIP-1967 proxies keep the address they delegate to.
var EIP1967ImplementationSlot = common.HexToHash("0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc")

// FunctionSighashes are the selectors a contract's dispatcher compares the calldata with
// (evmcode.FunctionSighashes, which the simulator shares).
func FunctionSighashes(code []byte) []string { return evmcode.FunctionSighashes(code) }

// IsContractCode reports whether code, as eth_getCode answers it, is a contract's. An EIP-7702
// delegation designator is not (evmcode.IsDelegation): the account is an EOA.
func IsContractCode(code []byte) bool {
	return len(code) > 0 && !evmcode.IsDelegation(code)
}

// EIP-1167 minimal proxy: 363d3d373d3d3d363d73 <20-byte target> 5af43d82803e903d91602b57fd5bf3.
var (
	minimalProxyHead = common.FromHex("0x363d3d373d3d3d363d73")
	minimalProxyTail = common.FromHex("0x5af43d82803e903d91602b57fd5bf3")
)

// MinimalProxyTarget is the address an EIP-1167 minimal proxy delegates to ("" when code is
// not one).
func MinimalProxyTarget(code []byte) string {
	if len(code) != len(minimalProxyHead)+20+len(minimalProxyTail) || !bytes.HasPrefix(code, minimalProxyHead) || !bytes.HasSuffix(code, minimalProxyTail) {
		return ""
	}
	return Addr(common.BytesToAddress(code[len(minimalProxyHead) : len(minimalProxyHead)+20]))
}

// ImplementationFromSlot reads an address kept in a storage word ("" when the word is zero or
// has bits above the address).
func ImplementationFromSlot(word common.Hash) string {
	for _, b := range word[:12] {
		if b != 0 {
			return ""
		}
	}
	a := common.BytesToAddress(word[12:])
	if a == (common.Address{}) {
		return ""
	}
	return Addr(a)
}

// CodeAndSlot is a contract's code and its EIP-1967 implementation slot at a block.
type CodeAndSlot struct {
	Code []byte
	Slot common.Hash
}

// CodeAndImplementationSlot reads, batched, the code and the EIP-1967 implementation slot of
// each address at its block.
func (c *Client) CodeAndImplementationSlot(ctx context.Context, qs []BalanceQuery) ([]CodeAndSlot, error) {
	codes := make([]hexutil.Bytes, len(qs))
	slots := make([]common.Hash, len(qs))
	elems := make([]rpc.BatchElem, 0, 2*len(qs))
	for i, q := range qs {
		blk := hexutil.Uint64(q.Block)
		elems = append(elems,
			rpc.BatchElem{Method: "eth_getCode", Args: []any{q.Address, blk}, Result: &codes[i]},
			rpc.BatchElem{Method: "eth_getStorageAt", Args: []any{q.Address, EIP1967ImplementationSlot, blk}, Result: &slots[i]})
	}
	if err := c.Batch(ctx, elems); err != nil {
		return nil, err
	}
	out := make([]CodeAndSlot, len(qs))
	for i := range qs {
		if e := elems[2*i].Error; e != nil {
			return nil, fmt.Errorf("eth_getCode %s: %w", Addr(qs[i].Address), e)
		}
		out[i].Code = codes[i]
		// A node without the state of that block, or one refusing storage reads, leaves the slot
		// zero: the contract is then not reported as an EIP-1967 proxy.
		if elems[2*i+1].Error == nil {
			out[i].Slot = slots[i]
		}
	}
	return out, nil
}
