package indexer

import (
	"strconv"
	"testing"
)

// The cache's answers: a contract's holds for good, "no code" for codeRecheckBlocks; a read
// finding code where none was reports it; a full cache drops the answers due for a re-read
// first and is cleared only when that is not enough.
func TestCodeCache(t *testing.T) {
	c := codeCache{}
	if c.set("0xa", 10, false) || c.set("0xc", 10, true) {
		t.Fatal("a first read reported code appearing")
	}
	if !c.current("0xa", 10+codeRecheckBlocks-1) || c.current("0xa", 10+codeRecheckBlocks) || !c.current("0xc", 1_000_000) {
		t.Error("want no-code current for codeRecheckBlocks, a contract for good")
	}
	if !c.set("0xa", 30, true) || !c.contract("0xa") || c.set("0xa", 40, true) {
		t.Error("code found after none: want it reported once and the address flagged")
	}

	full := codeCache{"0xc": {contract: true, at: 1}}
	for i := range codeCacheLimit - 1 {
		full[strconv.Itoa(i)] = codeAnswer{at: uint64(i % 2 * 100)} // half read at block 0, half at 100
	}
	kept := full.makeRoom(10, 100)
	if len(kept) != codeCacheLimit/2 || !kept.contract("0xc") || !kept.current("1", 100) {
		t.Errorf("made room at block 100: %d answers left, want the %d current ones", len(kept), codeCacheLimit/2)
	}
	if got := kept.makeRoom(codeCacheLimit, 100); len(got) != 0 {
		t.Errorf("no room to make: %d answers left, want the cache cleared", len(got))
	}
}
