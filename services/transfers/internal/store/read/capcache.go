package read

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// capCacheMax bounds how many filters a store remembers capped counts for; past it, it starts
// over.
const capCacheMax = 4096

// capCache remembers, per filter of a modelled base (an entity, type or deposit service), the
// earliest window end up to which its count was found at the cap (MaxCount), with the
// membership epoch and removal count it was read under (AddrSet.version).
//
// A count is capped, and the number of transfers up to a time only grows with that time and
// with new rows; it goes down only when a reorg removes rows (group_epoch.removals) or the
// base's membership changes (group_epoch.epoch), both read with the base's size in the same
// request. So while both stand, a count ending at or after a remembered end is the cap too,
// and is answered without reading. A keyset page turn of a busy entity asks for exactly that:
// the count up to the last row a client has, which stays at the cap for every turn but the
// last ones.
type capCache struct {
	mu   sync.Mutex
	m    map[string]capEntry
	hits atomic.Int64 // counts answered from the cache
}

type capEntry struct {
	version [2]int64
	end     time.Time // zero: the count over all time
}

// capKey is f's key in the cache without its window's end, and whether its count can be
// remembered: a base of model groups only, read with their version, and no window start (a
// later end then only adds rows), no counterparties and no from/to filter (kept out for
// simplicity: their sets are listed addresses the key would have to hold).
func capKey(f TransferFilter) (string, bool) {
	if !f.HasBase || !f.Base.versioned || len(f.Base.Addrs) > 0 || !f.TimeFrom.IsZero() || f.HasCP || f.From.Active() || f.To.Active() {
		return "", false
	}
	var b strings.Builder
	list := func(name string, v []string) {
		b.WriteString(name)
		b.WriteString(strconv.Itoa(len(v)))
		for _, s := range v {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(len(s)))
			b.WriteByte(':')
			b.WriteString(s)
		}
	}
	num := func(name string, v *float64) {
		b.WriteString(name)
		if v != nil {
			b.WriteString(strconv.FormatFloat(*v, 'g', -1, 64))
		}
		b.WriteByte(';')
	}
	b.WriteString(f.Flow)
	list("e", f.Base.Entities)
	list("t", f.Base.Types)
	list("d", f.Base.Deposits)
	list("c", f.Chains)
	list("ta", f.TokenAddrs)
	list("ti", f.TokenIDs)
	num("vg", f.ValueGte)
	num("vl", f.ValueLte)
	num("ug", f.USDGte)
	num("ul", f.USDLte)
	return b.String(), true
}

// reached reports whether the count of the filter keyed key up to end (zero: all time) is
// known to be at the cap under version.
func (c *capCache) reached(key string, version [2]int64, end time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || e.version != version {
		return false
	}
	if end.IsZero() || (!e.end.IsZero() && !end.Before(e.end)) {
		c.hits.Add(1)
		return true
	}
	return false
}

// record notes that the count of the filter keyed key up to end was found at the cap under
// version.
func (c *capCache) record(key string, version [2]int64, end time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok && e.version == version && (!e.end.IsZero() && (end.IsZero() || !end.Before(e.end))) {
		return // an earlier end is already known
	}
	if c.m == nil || len(c.m) >= capCacheMax {
		c.m = map[string]capEntry{}
	}
	c.m[key] = capEntry{version: version, end: end}
}
