package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/evmcode"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// erc20Selectors are the functions of the simulated token contracts: name, symbol, decimals,
// totalSupply, balanceOf, transfer, allowance, approve, transferFrom.
var erc20Selectors = [][4]byte{
	{0x06, 0xfd, 0xde, 0x03}, {0x95, 0xd8, 0x9b, 0x41}, {0x31, 0x3c, 0xe5, 0x67}, {0x18, 0x16, 0x0d, 0xdd},
	{0x70, 0xa0, 0x82, 0x31}, {0xa9, 0x05, 0x9c, 0xbb}, {0xdd, 0x62, 0xed, 0x3e}, {0x09, 0x5e, 0xa7, 0xb3},
	{0x23, 0xb8, 0x72, 0xdd},
}

// dispatcherCode is runtime code shaped as solc lays out a dispatcher: load the selector, then
// per function DUP1 PUSH4 <selector> EQ PUSH2 <body> JUMPI, a revert for anything else, and a
// JUMPDEST STOP body per function.
func dispatcherCode(sels [][4]byte) []byte {
	code := []byte{0x60, 0x80, 0x60, 0x40, 0x52, 0x60, 0x00, 0x35, 0x60, 0xe0, 0x1c}
	const entry = 10 // DUP1 PUSH4 x4 EQ PUSH2 x2 JUMPI
	body := len(code) + entry*len(sels) + 4
	for i, s := range sels {
		dest := body + 2*i
		code = append(code, 0x80, 0x63, s[0], s[1], s[2], s[3], 0x14, 0x61, byte(dest>>8), byte(dest), 0x57)
	}
	code = append(code, 0x60, 0x00, 0x80, 0xfd)
	for range sels {
		code = append(code, 0x5b, 0x00)
	}
	return code
}

// derived is a deterministic value of n bytes for a seed and parts, so that what the world
// adds here does not move its random stream.
func derived(seed int64, n int, parts ...string) string {
	h := sha256.New()
	_ = binary.Write(h, binary.LittleEndian, seed)
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return "0x" + hex.EncodeToString(h.Sum(nil)[:n])
}

// tokenContracts are the facts of the world's token contracts on EVM chains (chain.contracts.v1):
// each deployed, at the chain's first block, by an account of its own with a transaction of its
// own.
func (w *World) tokenContracts() []*eventsv1.Contract {
	code := dispatcherCode(erc20Selectors)
	var out []*eventsv1.Contract
	for _, cs := range w.chains {
		if cs.chain.Type != chains.TypeEVM {
			continue
		}
		n := cs.timing.first
		for _, t := range cs.tokens[1:] {
			out = append(out, &eventsv1.Contract{Chain: cs.chain.Name, Address: t.address, BlockNumber: n,
				BlockHash: blockHash(w.cfg.Seed, cs.chain.Type, cs.chain.Name, n), BlockTimeMs: cs.blockTime(w, n).UnixMilli(),
				Bytecode: "0x" + hex.EncodeToString(code), FunctionSighashes: evmcode.FunctionSighashes(code),
				Deployer:     derived(w.cfg.Seed, 20, "token deployer", cs.chain.Name, t.address),
				DeployTxHash: derived(w.cfg.Seed, 32, "token deployment", cs.chain.Name, t.address)})
		}
	}
	return out
}
