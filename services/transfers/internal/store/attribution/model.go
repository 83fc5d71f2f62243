// Package attribution is the transfers store's attribution read model as the API reads it: what
// the model knows of an address (its entity, label, prediction, deposit service), read through
// an in-process cache that the model's change log keeps exact.
package attribution

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/db"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5"
)

// Entity is an entity as attributions publish it; it renders as the API's Entity.
type Entity struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Note     string `json:"note"`
	Service  string `json:"service,omitempty"`
	Website  string `json:"website,omitempty"`
	Twitter  string `json:"twitter,omitempty"`
	LinkedIn string `json:"linkedin,omitempty"`
}

// Attribution is what the read model knows of one address.
type Attribution struct {
	ChainType        string
	Address          string
	Entity           *Entity
	Label            string
	Predicted        *Entity
	DepositServiceID string
	IsContract       bool
	Version          int64
	UpdatedAt        time.Time
}

// AddressKey names an address of a chain type.
type AddressKey struct{ ChainType, Address string }

// The model's statements, each file saying what its statement does.
var (
	//go:embed sql/read_since.sql
	readSinceSQL string
	//go:embed sql/read_attributions.sql
	readAttributionsSQL string
	//go:embed sql/prune_changes.sql
	pruneChangesSQL string
)

// Model reads attributions; it is safe for concurrent use.
type Model struct {
	db    *db.DB
	cache *cache // nil: none
}

// New returns a model reading through d that keeps up to cacheSize addresses' attributions in
// process (0: none).
func New(d *db.DB, cacheSize int) *Model { return &Model{db: d, cache: newCache(cacheSize)} }

// LogRetention is how long the attribution change log keeps an entry. A replica that
// reads nothing for longer drops its whole cache on its next read.
const LogRetention = time.Hour

// attrChangesPerSync is the most change-log entries a read applies one by one; past that the
// cache starts over (a relabel of a whole entity, a restart of intelligence).
const attrChangesPerSync = 5000

// cache keeps the attributions of the addresses pages render (rendering a page of 50
// transfers looks up about 100 addresses, an index probe each: more work than the rest of a
// page turn), including addresses the read model does not know. It is exact: before each use it reads
// the change log (attribution_changes, migration 13) past seq, the last entry it has applied, and
// drops the addresses named there; a row read from the database is kept only if it was read at
// or after seq (top), since an older read may predate a change the cache has already applied.
type cache struct {
	mu  sync.Mutex
	seq int64 // every change up to here is reflected; -1: nothing read yet
	lru *lru.Cache[AddressKey, cachedAttr]
}

type cachedAttr struct {
	a     Attribution
	known bool // false: the read model has no attribution for the address
}

func newCache(size int) *cache {
	if size <= 0 {
		return nil
	}
	l, _ := lru.New[AddressKey, cachedAttr](size) // only a size < 1 fails
	return &cache{seq: -1, lru: l}
}

// apply moves the cache to log position top: changed (the addresses of the entries past its
// position) are dropped, or everything when purge is set. A cache already at or past top is
// left alone (another read got there first).
func (c *cache) apply(top int64, purge bool, changed []AddressKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if top <= c.seq {
		return
	}
	if purge {
		c.lru.Purge()
	} else {
		for _, k := range changed {
			c.lru.Remove(k)
		}
	}
	c.seq = top
}

// get returns the cached attributions of keys (those the read model knows) and the keys not
// cached. c.mu must be held.
func (c *cache) get(keys []AddressKey, out map[AddressKey]Attribution) (miss []AddressKey) {
	for _, k := range keys {
		e, ok := c.lru.Get(k)
		switch {
		case !ok:
			miss = append(miss, k)
		case e.known:
			out[k] = e.a
		}
	}
	return miss
}

// put keeps what a read at log position top found of keys (found: the known ones), unless the
// cache has applied changes past top.
func (c *cache) put(top int64, keys []AddressKey, found map[AddressKey]Attribution) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if top < c.seq {
		return
	}
	for _, k := range keys {
		a, ok := found[k]
		c.lru.Add(k, cachedAttr{a: a, known: ok})
	}
}

// Attributions returns what is known of keys, by key: from the cache where it holds them, the
// rest from the read model (and into the cache). Each read is one statement (readSince): the
// change log past the cache's position, the keys not cached, and the cached keys the log names,
// of one snapshot. When the log says more than that statement reads (entries pruned past the
// cache's position, or more than attrChangesPerSync of them), the cache starts over and every
// key is read.
func (s *Model) Attributions(ctx context.Context, keys []AddressKey) (map[AddressKey]Attribution, error) {
	if len(keys) == 0 {
		return map[AddressKey]Attribution{}, nil
	}
	if s.cache == nil {
		out := make(map[AddressKey]Attribution, len(keys))
		return out, s.readAttributions(ctx, keys, out)
	}
	out, done, err := s.readSince(ctx, s.cache, keys, false)
	if err == nil && !done {
		out, _, err = s.readSince(ctx, s.cache, keys, true)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readSince reads keys through cache c in one statement: the change log past the cache's
// position seq (up to attrChangesPerSync entries), and the attributions of the keys not cached
// and of every cached key the log names, all of one snapshot. It applies the log to the cache
// and keeps what it read. done is false when the log says more than it read (entries pruned
// past seq, or more than it reads at once). afresh (or a cache that has read nothing yet) reads
// every key and not the log, and empties the cache: what it held may predate changes no longer
// known.
func (s *Model) readSince(ctx context.Context, c *cache, keys []AddressKey, afresh bool) (out map[AddressKey]Attribution, done bool, err error) {
	out = make(map[AddressKey]Attribution, len(keys))
	c.mu.Lock()
	seq := c.seq
	afresh = afresh || seq < 0
	miss := keys
	if !afresh {
		miss = c.get(keys, out) // exact as of seq
	}
	c.mu.Unlock()
	limit := attrChangesPerSync
	if afresh {
		limit = 0
	}
	cts, addrs, missing := make([]string, len(keys)), make([]string, len(keys)), make([]bool, len(keys))
	isMiss := make(map[AddressKey]bool, len(miss))
	for _, k := range miss {
		isMiss[k] = true
	}
	for i, k := range keys {
		cts[i], addrs[i], missing[i] = k.ChainType, k.Address, isMiss[k]
	}
	rows, err := s.db.QueryGeneric(ctx, readSinceSQL, cts, addrs, missing, seq, limit)
	if err != nil {
		return nil, false, fmt.Errorf("load attributions: %w", err)
	}
	r, err := scanSince(rows)
	if err != nil {
		return nil, false, err
	}
	pruned, top, entries, changed, found := r.pruned, r.top, r.entries, r.changed, r.found
	if !afresh && (seq < pruned || entries >= attrChangesPerSync) {
		return nil, false, nil
	}
	ks := make([]AddressKey, 0, len(changed))
	for k := range changed {
		ks = append(ks, k)
	}
	c.apply(top, afresh, ks)
	var read []AddressKey // every key read: the missing ones and those changed since seq
	for _, k := range keys {
		if isMiss[k] || changed[k] {
			read = append(read, k)
			delete(out, k)
			if a, ok := found[k]; ok {
				out[k] = a
			}
		}
	}
	c.put(top, read, found)
	return out, true, nil
}

// sinceRead is what readSince's statement read: the log's pruned position and top, its entries
// past the cache's position (how many, and the addresses they name) and the attributions found.
type sinceRead struct {
	pruned, top int64
	entries     int
	changed     map[AddressKey]bool
	found       map[AddressKey]Attribution
}

// scanSince reads the rows of readSinceSQL (kind 0: the log's bounds; 1: a log entry; 2: an
// attribution) and closes them.
func scanSince(rows pgx.Rows) (sinceRead, error) {
	defer rows.Close()
	r := sinceRead{changed: map[AddressKey]bool{}, found: map[AddressKey]Attribution{}}
	dec := entityDecoder{}
	for rows.Next() {
		var kind int
		var n1, n2 *int64
		var a attrRow
		if err := rows.Scan(&kind, &n1, &n2, &a.ct, &a.addr, &a.ej, &a.label, &a.pj, &a.dep, &a.isContract, &a.version, &a.updated); err != nil {
			return r, fmt.Errorf("scan attribution: %w", err)
		}
		switch kind {
		case 0:
			r.pruned, r.top = *n1, *n2
		case 1:
			r.entries++
			r.changed[AddressKey{*a.ct, *a.addr}] = true
		default:
			at, err := a.attribution(dec)
			if err != nil {
				return r, err
			}
			r.found[AddressKey{at.ChainType, at.Address}] = at
		}
	}
	if err := rows.Err(); err != nil {
		return r, fmt.Errorf("load attributions: %w", err)
	}
	return r, nil
}

// readAttributions reads keys from the read model into out (a model without a cache).
func (s *Model) readAttributions(ctx context.Context, keys []AddressKey, out map[AddressKey]Attribution) error {
	cts, addrs := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		cts[i], addrs[i] = k.ChainType, k.Address
	}
	rows, err := s.db.Query(ctx, readAttributionsSQL, cts, addrs)
	if err != nil {
		return fmt.Errorf("load attributions: %w", err)
	}
	defer rows.Close()
	dec := entityDecoder{}
	for rows.Next() {
		var r attrRow
		if err := rows.Scan(&r.ct, &r.addr, &r.ej, &r.label, &r.pj, &r.dep, &r.isContract, &r.version, &r.updated); err != nil {
			return fmt.Errorf("scan attribution: %w", err)
		}
		a, err := r.attribution(dec)
		if err != nil {
			return err
		}
		out[AddressKey{a.ChainType, a.Address}] = a
	}
	return rows.Err()
}

// attrRow is an attributions row as scanned (NULL where an outer join or a union found none).
type attrRow struct {
	ct, addr, label, dep *string
	ej, pj               []byte
	isContract           *bool
	version              *int64
	updated              *time.Time
}

// entityDecoder decodes each distinct entity document once: the addresses of a page mostly
// belong to a few entities. Entities are read-only once decoded, so they are shared.
type entityDecoder map[string]*Entity

func (d entityDecoder) entity(raw []byte) (*Entity, error) {
	if raw == nil {
		return nil, nil
	}
	if e, ok := d[string(raw)]; ok {
		return e, nil
	}
	e := new(Entity)
	if err := json.Unmarshal(raw, e); err != nil {
		return nil, err
	}
	d[string(raw)] = e
	return e, nil
}

func (r attrRow) attribution(d entityDecoder) (Attribution, error) {
	a := Attribution{ChainType: *r.ct, Address: *r.addr, Label: *r.label, DepositServiceID: *r.dep, IsContract: *r.isContract,
		Version: *r.version, UpdatedAt: *r.updated}
	var err error
	if a.Entity, err = d.entity(r.ej); err != nil {
		return a, fmt.Errorf("attribution entity of %s: %w", a.Address, err)
	}
	if a.Predicted, err = d.entity(r.pj); err != nil {
		return a, fmt.Errorf("attribution prediction of %s: %w", a.Address, err)
	}
	return a, nil
}

// PruneChanges drops change log entries older than LogRetention and
// records the last one dropped.
func PruneChanges(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, pruneChangesSQL, LogRetention.Seconds()); err != nil {
		return fmt.Errorf("prune attribution changes: %w", err)
	}
	return nil
}
