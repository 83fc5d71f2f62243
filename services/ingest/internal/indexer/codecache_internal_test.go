package indexer

import (
	"slices"
	"strconv"
	"testing"
	"time"
)

// The cache's answers: a contract's holds for good, "no code" for the re-check time (chain
// time); a read finding code where the cache's earlier read found none reports it, in the
// round's list, and the cache takes a round's answers only when it is committed, so a retried
// round reports it again; a full cache drops the answers due for a re-read first and is cleared
// only when that is not enough.
func TestCodeCache(t *testing.T) {
	const min = int64(60_000)
	c := newCodeCache(3 * time.Minute)
	r := newCodeRound()
	c.read(r, "0xa", 0, false)
	c.read(r, "0xc", 0, true)
	if len(r.appeared) != 0 {
		t.Fatal("a first read reported code appearing")
	}
	if c.current("0xa", 0) || !c.contract(r, "0xc") || c.contract(newCodeRound(), "0xc") {
		t.Fatal("want the round's answers visible through the round only until committed")
	}
	c.commit(r, 0)
	if !c.current("0xa", 3*min-1) || c.current("0xa", 3*min) || !c.current("0xc", 1_000*min) {
		t.Error("want no-code current for 3 minutes of chain time, a contract for good")
	}
	for range 2 { // the round failed after its read and is retried: reported again
		r = newCodeRound()
		c.read(r, "0xa", 5*min, true)
		c.read(r, "0xa", 5*min, true)
		if !slices.Equal(r.appeared, []string{"0xa"}) || !c.contract(r, "0xa") || c.contract(newCodeRound(), "0xa") {
			t.Fatalf("code found after none: appeared %v, want [0xa] once and the address flagged in the round", r.appeared)
		}
	}
	c.commit(r, 5*min)
	r = newCodeRound()
	if c.read(r, "0xa", 10*min, true); len(r.appeared) != 0 || !c.contract(r, "0xa") {
		t.Error("a contract read again reported as appearing")
	}

	full := newCodeCache(3 * time.Minute)
	full.answers["0xc"] = codeAnswer{contract: true}
	for i := range codeCacheLimit - 1 {
		full.answers[strconv.Itoa(i)] = codeAnswer{atMs: int64(i%2) * 10 * min} // half read at 0, half at 10 minutes
	}
	more := newCodeRound()
	for i := range 10 {
		full.read(more, "new"+strconv.Itoa(i), 10*min, false)
	}
	// Code appearing at an address whose "no code" is due for a re-read, in the round that makes
	// room: reported, the answers are dropped only after the round's reads compared with them.
	full.read(more, "0", 10*min, true)
	if !slices.Equal(more.appeared, []string{"0"}) {
		t.Errorf("code appeared in a round that makes room: reported %v, want [0]", more.appeared)
	}
	full.commit(more, 10*min)
	if len(full.answers) != codeCacheLimit/2+11 || !full.current("0xc", 10*min) || !full.current("1", 10*min) || !full.current("new0", 10*min) || !full.contract(newCodeRound(), "0") {
		t.Errorf("made room at 10 minutes: %d answers left, want the %d current ones and the round's 11", len(full.answers), codeCacheLimit/2)
	}
	huge := newCodeRound()
	for i := range codeCacheLimit {
		huge.answers["h"+strconv.Itoa(i)] = codeAnswer{atMs: 10 * min}
	}
	if full.commit(huge, 10*min); len(full.answers) != codeCacheLimit || full.current("0xc", 10*min) {
		t.Errorf("no room to make: %d answers left, want the cache cleared and the round's kept", len(full.answers))
	}
}

// An address found without code keeps that answer at most the re-check time of chain time,
// however many blocks pass: Arbitrum's quarter-second blocks read it no more often than
// Ethereum's 12 s ones.
func TestCodeRecheckIsChainTime(t *testing.T) {
	c := newCodeCache(DefaultCodeRecheck)
	r := newCodeRound()
	c.read(r, "0xa", 0, false)
	c.commit(r, 0)
	for block := int64(1); block < 720; block++ { // 250 ms blocks for 3 minutes
		if !c.current("0xa", block*250) {
			t.Fatalf("no-code answer due for a re-read after %d ms", block*250)
		}
	}
	if c.current("0xa", 720*250) {
		t.Fatal("no-code answer still current after 3 minutes")
	}
}
