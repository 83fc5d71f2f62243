// Package evmcode reads facts from EVM contract bytecode without a node: shared by the indexer,
// which reads code from the chain, and the simulator, which makes its tokens' code.
package evmcode

import (
	"bytes"
	"encoding/hex"
	"slices"
	"strings"
)

// Opcodes the dispatcher scan reads.
const (
	opPush1  = 0x60
	opPush4  = 0x63
	opPush32 = 0x7f
	opEQ     = 0x14
)

// FunctionSighashes are the selectors a contract's dispatcher compares the calldata with:
// every PUSH4 immediately followed by EQ, walking the code opcode by opcode so that push data
// is never read as an opcode. Sorted "0x" + 8 hex digits, without duplicates; nil for no code.
// Selectors a compiler compares otherwise (Vyper's XOR, jump tables) are not found.
func FunctionSighashes(code []byte) []string {
	var out []string
	for i := 0; i < len(code); i++ {
		op := code[i]
		if op < opPush1 || op > opPush32 {
			continue
		}
		n := int(op-opPush1) + 1
		if op == opPush4 && i+5 < len(code) && code[i+5] == opEQ {
			out = append(out, "0x"+hex.EncodeToString(code[i+1:i+5]))
		}
		i += n
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// delegationPrefix starts the code of an EIP-7702 delegated account: 0xef0100 and the 20-byte
// address whose code its calls run.
var delegationPrefix = []byte{0xef, 0x01, 0x00}

// IsDelegation reports whether code, as eth_getCode answers it, is an EIP-7702 delegation
// designator: the account is an EOA (its key still signs its transactions, and its owner can
// clear or change the delegation), not a contract.
func IsDelegation(code []byte) bool {
	return len(code) == len(delegationPrefix)+20 && bytes.HasPrefix(code, delegationPrefix)
}

// IsDelegationHex is IsDelegation of code in hex, with or without 0x.
func IsDelegationHex(code string) bool {
	h := strings.TrimPrefix(strings.TrimPrefix(code, "0x"), "0X")
	return len(h) == 2*(len(delegationPrefix)+20) && strings.EqualFold(h[:6], "ef0100")
}
