package indexer

// codeCacheLimit bounds the contract-flag cache; when full, answers due for a re-read are
// dropped, and if that frees too little it is cleared.
const codeCacheLimit = 500_000

// codeRecheckBlocks is how long an address found without code is believed to stay so. Code can
// appear at an address that already took part in transfers (a counterfactual wallet a factory
// deploys later with CREATE2, inside a call no receipt names), so an address without code seen
// in a transfer again at least this many blocks after its last read is read again. A contract
// keeps its answer. At most one read per address per this many blocks: an address active in
// every block costs a sixteenth of a read per block, one seen less often the same read as a
// first sight.
const codeRecheckBlocks = 16

// codeAnswer is whether an address held code when read at block at.
type codeAnswer struct {
	contract bool
	at       uint64
}

// codeCache remembers eth_getCode answers per address.
type codeCache map[string]codeAnswer

// current reports whether a's cached answer still holds at block n: a contract's always, an
// address without code's for codeRecheckBlocks after it was read.
func (c codeCache) current(a string, n uint64) bool {
	e, ok := c[a]
	return ok && (e.contract || n < e.at+codeRecheckBlocks)
}

// contract is the cached flag of a (false when unknown).
func (c codeCache) contract(a string) bool { return c[a].contract }

// set records a's answer read at block n and reports whether code appeared where an earlier
// read found none.
func (c codeCache) set(a string, n uint64, contract bool) (appeared bool) {
	e, ok := c[a]
	c[a] = codeAnswer{contract: contract, at: n}
	return ok && !e.contract && contract
}

// makeRoom drops answers due for a re-read at block n when adding more would pass
// codeCacheLimit, and clears c if that is not enough; it returns the cache to use.
func (c codeCache) makeRoom(more int, n uint64) codeCache {
	if len(c)+more <= codeCacheLimit {
		return c
	}
	for a := range c {
		if !c.current(a, n) {
			delete(c, a)
		}
	}
	if len(c)+more <= codeCacheLimit {
		return c
	}
	return codeCache{}
}
