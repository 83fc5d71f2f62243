package attribution

import (
	"context"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/lifecycle"
)

// Changes is what the cache reads from the store: every entity and address changed after a
// version, in version order, at most limit of each.
type Changes interface {
	EntitiesSince(ctx context.Context, version int64, limit int) ([]Entity, error)
	AddressesSince(ctx context.Context, version int64, limit int) ([]Address, error)
}

// AttributionCache is an in-memory copy of every resolved attribution and entity, kept current
// by polling the store for rows with a higher version. Lookups never touch the database, which is
// what keeps address lookups within a couple of milliseconds with millions of labelled
// addresses.
//
// Addresses are held without Go pointers (fixed-size hashed keys, entries of integers, and the
// text in one byte arena) so that the garbage collector does not walk millions of objects on
// every cycle; entity ids, deposit services and cluster sets, which are few, are interned. It is
// safe for concurrent use; the zero value is not usable (use NewCache).
type AttributionCache struct {
	src Changes

	mu      sync.RWMutex
	seed1   maphash.Seed
	seed2   maphash.Seed
	index   map[[16]byte]int32
	entries []entry
	arena   []byte // keys and labels
	strs    []string
	strIdx  map[string]int32
	ents    map[string]*Entity
	search  []entityText // every entity, for search (search.go)
	types   []string     // the distinct entity types, sorted
	// searchStale: entities changed since search and types were built.
	searchStale bool
	entVer      int64
	addrVer     int64
}

// entry is one address; string fields are offsets into the arena or indexes into strs (-1: none).
type entry struct {
	keyOff, labelOff uint32
	keyLen, labelLen uint16
	entity           int32
	predicted        int32
	deposit          int32
	clusters         int32 // interned "\x00"-joined cluster ids
	contract         bool
}

// NewCache returns an empty cache reading from src; call Refresh (or Run) to fill it.
func NewCache(src Changes) *AttributionCache {
	return &AttributionCache{src: src, seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed(), index: map[[16]byte]int32{},
		strIdx: map[string]int32{}, ents: map[string]*Entity{}}
}

const refreshPage = 20000

// Refresh applies every change made since the last refresh.
func (c *AttributionCache) Refresh(ctx context.Context) error {
	for {
		c.mu.RLock()
		v := c.entVer
		c.mu.RUnlock()
		es, err := c.src.EntitiesSince(ctx, v, refreshPage)
		if err != nil {
			return err
		}
		c.mu.Lock()
		for i := range es {
			e := es[i]
			c.ents[e.ID] = &e
			c.entVer = max(c.entVer, e.Version)
		}
		c.searchStale = c.searchStale || len(es) > 0
		c.mu.Unlock()
		if len(es) < refreshPage {
			break
		}
	}
	// Rebuilt once all pages are in (not per page), and on a later refresh if this one failed
	// after applying some.
	c.mu.Lock()
	if c.searchStale {
		c.rebuildSearch()
		c.searchStale = false
	}
	c.mu.Unlock()
	for {
		c.mu.RLock()
		v := c.addrVer
		c.mu.RUnlock()
		as, err := c.src.AddressesSince(ctx, v, refreshPage)
		if err != nil {
			return err
		}
		c.mu.Lock()
		for i := range as {
			c.put(&as[i])
		}
		c.mu.Unlock()
		if len(as) < refreshPage {
			return nil
		}
	}
}

func (c *AttributionCache) hash(key string) [16]byte {
	var h [16]byte
	a, b := maphash.String(c.seed1, key), maphash.String(c.seed2, key)
	for i := 0; i < 8; i++ {
		h[i], h[8+i] = byte(a>>(8*i)), byte(b>>(8*i))
	}
	return h
}

func (c *AttributionCache) intern(s string) int32 {
	if s == "" {
		return -1
	}
	if i, ok := c.strIdx[s]; ok {
		return i
	}
	i := int32(len(c.strs))
	c.strs = append(c.strs, s)
	c.strIdx[s] = i
	return i
}

func (c *AttributionCache) str(i int32) string {
	if i < 0 {
		return ""
	}
	return c.strs[i]
}

func (c *AttributionCache) text(off uint32, n uint16) string {
	return string(c.arena[off : off+uint32(n)])
}

// put stores a under the write lock.
func (c *AttributionCache) put(a *Address) {
	key := Key(a.ChainType, a.Address)
	h := c.hash(key)
	label := a.Label
	if len(label) > 0xffff {
		label = label[:0xffff]
	}
	e := entry{entity: c.intern(a.EntityID), predicted: c.intern(a.PredictedEntity), deposit: c.intern(a.DepositServiceID),
		clusters: c.intern(strings.Join(a.ClusterIDs, "\x00")), contract: a.IsContract}
	i, ok := c.index[h]
	if ok && string(c.arena[c.entries[i].keyOff:c.entries[i].keyOff+uint32(c.entries[i].keyLen)]) == key {
		old := c.entries[i]
		e.keyOff, e.keyLen = old.keyOff, old.keyLen
		if c.text(old.labelOff, old.labelLen) == label {
			e.labelOff, e.labelLen = old.labelOff, old.labelLen
		} else {
			e.labelOff, e.labelLen = c.appendText(label)
		}
		c.entries[i] = e
	} else {
		// A 128-bit hash collision between two keys is not expected in practice; if one
		// happened, the newer key would take the slot.
		e.keyOff, e.keyLen = c.appendText(key)
		e.labelOff, e.labelLen = c.appendText(label)
		c.index[h] = int32(len(c.entries))
		c.entries = append(c.entries, e)
	}
	c.addrVer = max(c.addrVer, a.Version)
}

func (c *AttributionCache) appendText(s string) (uint32, uint16) {
	off := uint32(len(c.arena))
	c.arena = append(c.arena, s...)
	return off, uint16(len(s))
}

// Run refreshes every interval until ctx ends; failures are logged and retried.
func (c *AttributionCache) Run(ctx context.Context, interval time.Duration, log *slog.Logger) error {
	return lifecycle.Every(ctx, interval, func(ctx context.Context) {
		if err := c.Refresh(ctx); err != nil && ctx.Err() == nil {
			log.Warn("attribution cache refresh failed", "error", err)
		}
	})
}

// Entity returns the operator entity id.
func (c *AttributionCache) Entity(id string) (Entity, bool) {
	c.mu.RLock()
	e, ok := c.ents[id]
	c.mu.RUnlock()
	if !ok {
		return Entity{}, false
	}
	return *e, true
}

// Resolved is an address's attribution with its entities looked up.
type Resolved struct {
	Known bool
	Address
	Entity    *Entity // nil when none
	Predicted *Entity // nil when none
}

// Lookup returns what is known of each key ("<chainType>:<address>"), in the order of keys;
// Known is false for keys with nothing known. The entities returned must not be modified.
func (c *AttributionCache) Lookup(keys []string) []Resolved {
	out := make([]Resolved, len(keys))
	c.mu.RLock()
	defer c.mu.RUnlock()
	for j, k := range keys {
		i, ok := c.index[c.hash(k)]
		if !ok {
			continue
		}
		e := &c.entries[i]
		if string(c.arena[e.keyOff:e.keyOff+uint32(e.keyLen)]) != k { // compared without a copy
			continue
		}
		ct, addr, _ := strings.Cut(k, ":")
		r := Resolved{Known: true, Address: Address{ChainType: ct, Address: addr, EntityID: c.str(e.entity), Label: c.text(e.labelOff, e.labelLen),
			PredictedEntity: c.str(e.predicted), DepositServiceID: c.str(e.deposit), IsContract: e.contract}}
		if cl := c.str(e.clusters); cl != "" {
			r.ClusterIDs = strings.Split(cl, "\x00")
		}
		if r.EntityID != "" {
			r.Entity = c.ents[r.EntityID]
		}
		if r.PredictedEntity != "" {
			r.Predicted = c.ents[r.PredictedEntity]
		}
		out[j] = r
	}
	return out
}

// Len returns the number of cached addresses.
func (c *AttributionCache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
