package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5"
)

// DefaultAttributionCache is how many addresses' attributions a store keeps in process.
const DefaultAttributionCache = 200_000

// AttributionLogRetention is how long the attribution change log keeps an entry. A replica that
// reads nothing for longer drops its whole cache on its next read.
const AttributionLogRetention = time.Hour

// attrChangesPerSync is the most change-log entries a read applies one by one; past that the
// cache starts over (a relabel of a whole entity, a restart of intelligence).
const attrChangesPerSync = 5000

// attrCache keeps the attributions of the addresses pages render (rendering a page of 50
// transfers looks up about 100 addresses: a few milliseconds of index probes, most of a page
// turn), including addresses the read model does not know. It is exact: before each use it reads
// the change log (attribution_changes, migration 13) past seq, the last entry it has applied, and
// drops the addresses named there; a row read from the database is kept only if it was read at
// or after seq (top), since an older read may predate a change the cache has already applied.
type attrCache struct {
	mu  sync.Mutex
	seq int64 // every change up to here is reflected; -1: nothing read yet
	lru *lru.Cache[AddressKey, cachedAttr]
}

type cachedAttr struct {
	a     Attribution
	known bool // false: the read model has no attribution for the address
}

func newAttrCache(size int) *attrCache {
	if size <= 0 {
		return nil
	}
	l, _ := lru.New[AddressKey, cachedAttr](size) // only a size < 1 fails
	return &attrCache{seq: -1, lru: l}
}

// SetAttributionCache sets how many addresses' attributions the store keeps in process; 0 keeps
// none (every page reads them from the read model).
func (s *Store) SetAttributionCache(size int) { s.attrs = newAttrCache(size) }

// sync applies the change log past c.seq: the addresses changed since are dropped. A cache that
// has read nothing yet, fell behind the log's pruning, or has more than attrChangesPerSync
// changes to apply is emptied and starts at the log's head.
func (c *attrCache) sync(ctx context.Context, s *Store) error {
	c.mu.Lock()
	from := c.seq
	c.mu.Unlock()
	rows, err := s.query(ctx, `SELECT l.pruned, coalesce((SELECT max(seq) FROM transfers.attribution_changes), l.pruned),
		c.seq, c.chain_type, c.address
		FROM transfers.attribution_log l LEFT JOIN LATERAL (SELECT seq, chain_type, address FROM transfers.attribution_changes
		  WHERE seq > $1 ORDER BY seq LIMIT $2) c ON true`, from, attrChangesPerSync)
	if err != nil {
		return fmt.Errorf("attribution changes: %w", err)
	}
	var pruned, top int64
	var changed []AddressKey
	for rows.Next() {
		var seq *int64
		var k AddressKey
		var ct, addr *string
		if err := rows.Scan(&pruned, &top, &seq, &ct, &addr); err != nil {
			return fmt.Errorf("scan attribution changes: %w", err)
		}
		if seq != nil {
			k.ChainType, k.Address = *ct, *addr
			changed = append(changed, k)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("attribution changes: %w", err)
	}
	c.apply(top, from < 0 || from < pruned || len(changed) >= attrChangesPerSync, changed)
	return nil
}

// apply moves the cache to log position top: changed (the addresses of the entries past its
// position) are dropped, or everything when purge is set. A cache already at or past top is
// left alone (another read got there first).
func (c *attrCache) apply(top int64, purge bool, changed []AddressKey) {
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
// cached.
func (c *attrCache) get(keys []AddressKey, out map[AddressKey]Attribution) (miss []AddressKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getLocked(keys, out)
}

// getLocked is get with c.mu held.
func (c *attrCache) getLocked(keys []AddressKey, out map[AddressKey]Attribution) (miss []AddressKey) {
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
func (c *attrCache) put(top int64, keys []AddressKey, found map[AddressKey]Attribution) {
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
// rest from the read model (and into the cache). With every key cached, the change log is read
// past the cache's position and the addresses changed since are dropped and read again. With
// some keys missing, one statement reads the change log, the missing keys and any cached key the
// log names, in one snapshot (readSince): a page turn of cache misses made two round trips,
// about 0.5 ms of a 6 ms turn.
func (s *Store) Attributions(ctx context.Context, keys []AddressKey) (map[AddressKey]Attribution, error) {
	out := make(map[AddressKey]Attribution, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	c := s.attrs
	if c == nil {
		_, err := s.readAttributions(ctx, keys, out)
		return out, err
	}
	c.mu.Lock()
	seq := c.seq
	miss := c.getLocked(keys, out) // exact as of seq
	c.mu.Unlock()
	if len(miss) > 0 && seq >= 0 {
		done, err := s.readSince(ctx, c, seq, keys, miss, out)
		if err != nil {
			return nil, err
		}
		if done {
			return out, nil
		}
		// The log moved on too far: the cache has started over; read as from scratch.
	}
	if err := c.sync(ctx, s); err != nil {
		return nil, err
	}
	clear(out)
	if miss = c.get(keys, out); len(miss) == 0 {
		return out, nil
	}
	found := make(map[AddressKey]Attribution, len(miss))
	top, err := s.readAttributions(ctx, miss, found)
	if err != nil {
		return nil, err
	}
	c.put(top, miss, found)
	for k, a := range found {
		out[k] = a
	}
	return out, nil
}

// readSince completes out, which holds the cached attributions of keys as of change seq (miss:
// the keys not cached then), in one statement: the change log past seq (up to
// attrChangesPerSync entries), and the attributions of the missing keys and of every key the
// log names, all of one snapshot. It applies the log to the cache and keeps what it read. done
// is false when the log says more than it read (entries pruned past seq, or more than it reads
// at once): the cache then starts over and the caller reads again.
func (s *Store) readSince(ctx context.Context, c *attrCache, seq int64, keys, miss []AddressKey, out map[AddressKey]Attribution) (done bool, err error) {
	cts, addrs, missing := make([]string, len(keys)), make([]string, len(keys)), make([]bool, len(keys))
	isMiss := make(map[AddressKey]bool, len(miss))
	for _, k := range miss {
		isMiss[k] = true
	}
	for i, k := range keys {
		cts[i], addrs[i], missing[i] = k.ChainType, k.Address, isMiss[k]
	}
	rows, err := s.queryGeneric(ctx, `WITH l AS (SELECT pruned, coalesce((SELECT max(seq) FROM transfers.attribution_changes), pruned) AS top
		    FROM transfers.attribution_log),
		  ch AS MATERIALIZED (SELECT seq, chain_type, address FROM transfers.attribution_changes WHERE seq > $4 ORDER BY seq LIMIT $5),
		  k AS (SELECT k.ct, k.addr FROM unnest($1::text[], $2::text[], $3::bool[]) k(ct, addr, miss)
		    WHERE k.miss OR EXISTS (SELECT 1 FROM ch WHERE ch.chain_type = k.ct AND ch.address = k.addr COLLATE "C"))
		SELECT 0 AS kind, l.pruned, l.top, NULL::text, NULL::text, NULL::jsonb, NULL::text, NULL::jsonb, NULL::text, NULL::boolean,
		  NULL::bigint, NULL::timestamptz FROM l
		UNION ALL
		SELECT 1, ch.seq, NULL, ch.chain_type, ch.address, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM ch
		UNION ALL
		SELECT 2, NULL, NULL, a.chain_type, a.address, a.entity, a.label, a.predicted, a.deposit_service_id, a.is_contract,
		  a.version, a.updated_at
		FROM k JOIN transfers.attributions a ON a.chain_type = k.ct AND a.address = k.addr COLLATE "C"`,
		cts, addrs, missing, seq, attrChangesPerSync)
	if err != nil {
		return false, fmt.Errorf("load attributions: %w", err)
	}
	defer rows.Close()
	var pruned, top int64
	entries := 0
	changed := map[AddressKey]bool{}
	found := map[AddressKey]Attribution{}
	dec := entityDecoder{}
	for rows.Next() {
		var kind int
		var n1, n2 *int64
		var r attrRow
		if err := rows.Scan(&kind, &n1, &n2, &r.ct, &r.addr, &r.ej, &r.label, &r.pj, &r.dep, &r.isContract, &r.version, &r.updated); err != nil {
			return false, fmt.Errorf("scan attribution: %w", err)
		}
		switch kind {
		case 0:
			pruned, top = *n1, *n2
		case 1:
			entries++
			changed[AddressKey{*r.ct, *r.addr}] = true
		default:
			a, err := r.attribution(dec)
			if err != nil {
				return false, err
			}
			found[AddressKey{a.ChainType, a.Address}] = a
		}
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("load attributions: %w", err)
	}
	rows.Close()
	complete := seq >= pruned && entries < attrChangesPerSync
	var ks []AddressKey
	for k := range changed {
		ks = append(ks, k)
	}
	c.apply(top, !complete, ks)
	if !complete {
		return false, nil
	}
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
	return true, nil
}

// readAttributions reads keys from the read model into out, and returns the change log's
// position in the same snapshot.
func (s *Store) readAttributions(ctx context.Context, keys []AddressKey, out map[AddressKey]Attribution) (top int64, err error) {
	cts, addrs := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		cts[i], addrs[i] = k.ChainType, k.Address
	}
	// One statement, so the rows and the log position are of one snapshot. COLLATE "C": the
	// address column's collation, so the comparison is a memcmp, as in its index.
	rows, err := s.query(ctx, `SELECT t.top, a.chain_type, a.address, a.entity, a.label, a.predicted, a.deposit_service_id,
		a.is_contract, a.version, a.updated_at
		FROM (SELECT coalesce((SELECT max(seq) FROM transfers.attribution_changes), (SELECT pruned FROM transfers.attribution_log)) AS top) t
		LEFT JOIN (transfers.attributions a JOIN unnest($1::text[], $2::text[]) k(ct, addr)
		  ON a.chain_type = k.ct AND a.address = k.addr COLLATE "C") ON true`, cts, addrs)
	if err != nil {
		return 0, fmt.Errorf("load attributions: %w", err)
	}
	defer rows.Close()
	dec := entityDecoder{}
	for rows.Next() {
		var r attrRow
		if err := rows.Scan(&top, &r.ct, &r.addr, &r.ej, &r.label, &r.pj, &r.dep, &r.isContract, &r.version, &r.updated); err != nil {
			return 0, fmt.Errorf("scan attribution: %w", err)
		}
		if r.ct == nil {
			continue // no key is known (the one row of the outer join)
		}
		a, err := r.attribution(dec)
		if err != nil {
			return 0, err
		}
		out[AddressKey{a.ChainType, a.Address}] = a
	}
	return top, rows.Err()
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

// pruneAttributionChanges drops change log entries older than AttributionLogRetention and
// records the last one dropped.
func pruneAttributionChanges(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `WITH gone AS (DELETE FROM transfers.attribution_changes
		  WHERE at < now() - make_interval(secs => $1) RETURNING seq)
		UPDATE transfers.attribution_log SET pruned = greatest(pruned, (SELECT max(seq) FROM gone))
		WHERE EXISTS (SELECT 1 FROM gone)`, AttributionLogRetention.Seconds()); err != nil {
		return fmt.Errorf("prune attribution changes: %w", err)
	}
	return nil
}
