package indexer

import "time"

// codeCacheLimit bounds the contract-flag cache; when a round's answers would pass it, answers
// due for a re-read are dropped, and if that frees too little it is cleared.
const codeCacheLimit = 500_000

// DefaultCodeRecheck is how long, in chain time, an address found without code is believed to
// stay so. Code can appear at an address that already took part in transfers (a counterfactual
// wallet a factory deploys later with CREATE2, inside a call no receipt names), so an address
// without code seen in a transfer again at least this long after its last read (block times) is
// read again. A contract keeps its answer. At most one read per address per this long, whatever
// the chain's block time and the round's size.
const DefaultCodeRecheck = 3 * time.Minute

// codeAnswer is whether an address held contract code when read at the block of time atMs.
type codeAnswer struct {
	contract bool
	atMs     int64
}

// codeCache remembers committed rounds' eth_getCode answers per address.
type codeCache struct {
	answers   map[string]codeAnswer
	recheckMs int64
}

func newCodeCache(recheck time.Duration) *codeCache {
	return &codeCache{answers: map[string]codeAnswer{}, recheckMs: recheck.Milliseconds()}
}

// codeRound is what one round read: its answers and the addresses where code appeared after an
// earlier read found none. The cache takes them only once the round is committed, so a round
// that fails and is retried reads and reports the same again (its contract records included).
type codeRound struct {
	answers  map[string]codeAnswer
	appeared []string
}

func newCodeRound() *codeRound { return &codeRound{answers: map[string]codeAnswer{}} }

// current reports whether a's cached answer still holds at the block of time ms: a contract's
// always, "no code" for recheck after it was read.
func (c *codeCache) current(a string, ms int64) bool {
	e, ok := c.answers[a]
	return ok && (e.contract || ms < e.atMs+c.recheckMs)
}

// contract is a's flag: the round's answer, else the cache's (false when unknown).
func (c *codeCache) contract(r *codeRound, a string) bool {
	if e, ok := r.answers[a]; ok {
		return e.contract
	}
	return c.answers[a].contract
}

// read records in r a's answer read at the block of time ms, listing a in r.appeared when code
// appeared where the cache's earlier read found none.
func (c *codeCache) read(r *codeRound, a string, ms int64, contract bool) {
	if e, ok := c.answers[a]; ok && !e.contract && contract {
		if _, again := r.answers[a]; !again {
			r.appeared = append(r.appeared, a)
		}
	}
	r.answers[a] = codeAnswer{contract: contract, atMs: ms}
}

// commit takes a committed round's answers, first making room for them at the block of time ms:
// when they would pass codeCacheLimit, the answers due for a re-read are dropped, and the cache
// is cleared if that is not enough.
func (c *codeCache) commit(r *codeRound, ms int64) {
	if len(c.answers)+len(r.answers) > codeCacheLimit {
		for a := range c.answers {
			if !c.current(a, ms) {
				delete(c.answers, a)
			}
		}
		if len(c.answers)+len(r.answers) > codeCacheLimit {
			c.answers = map[string]codeAnswer{}
		}
	}
	for a, e := range r.answers {
		c.answers[a] = e
	}
}
