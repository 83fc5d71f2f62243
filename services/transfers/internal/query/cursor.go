package query

import (
	"encoding/base64"
	"encoding/binary"
	"hash/fnv"
	"math"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/chainintel/chainintel/libs/params"
)

// A cursor is where a client's last page of /transfers ended: the sort key of its last row and
// that row's natural id (chain, id), which together are the row's place in the order the store
// sorts by (key, chain, id). The next page is every row strictly after it, so a client pages to
// the end past the offset window and sees each row once. Ties counts the rows before and at
// that place sharing its key; it only sizes the next read (the rows strictly after are found by
// comparing places, whatever it says). Filter is a hash of the query's filters, so a cursor is
// refused on a query other than the one it came from. Ahead is how many matches lie strictly
// after its place, when its page counted fewer than the cap (-1: not known): the next page's
// count is then carried rather than read (app/cursor.go).
type Cursor struct {
	SortKey string // time or value
	SortDir string // desc or asc
	Key     int64  // time: the block time in Unix microseconds; value: the float64's bits
	Chain   string
	ID      string
	Ties    int
	Filter  uint64
	Ahead   int

	v1 bool // decoded from a version 1 text (no Ahead), which it encodes back to
}

// MaxCursor is the longest cursor accepted, encoded.
const MaxCursor = 512

// cursorVersion 2 adds Ahead; a version 1 cursor (issued before) is still accepted, with Ahead
// unknown, so clients paging across an upgrade go on.
const cursorVersion = 2

// cursorParams are the parameters that do not select rows: a cursor is valid across them.
var cursorParams = []string{"cursor", "includeCursors", "limit", "offset"}

// FilterHash hashes the parameters of q that select and order rows, in a canonical order.
func FilterHash(q url.Values) uint64 {
	keys := make([]string, 0, len(q))
	for k := range q {
		if !slices.Contains(cursorParams, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	h := fnv.New64a()
	for _, k := range keys {
		vs := slices.Clone(q[k])
		slices.Sort(vs)
		_, _ = h.Write([]byte(k + "\x00" + strings.Join(vs, "\x01") + "\x00"))
	}
	return h.Sum64()
}

// Encode returns the cursor's opaque text (base64url of a versioned binary record).
func (c Cursor) Encode() string {
	b := make([]byte, 0, 36+len(c.Chain)+len(c.ID))
	v := byte(cursorVersion)
	if c.v1 {
		v = 1
	}
	b = append(b, v, sortCode(c.SortKey, c.SortDir))
	b = binary.BigEndian.AppendUint64(b, uint64(c.Key))
	b = binary.BigEndian.AppendUint64(b, c.Filter)
	b = binary.AppendUvarint(b, uint64(c.Ties))
	if !c.v1 {
		b = binary.AppendUvarint(b, uint64(c.Ahead+1)) // 0: unknown
	}
	b = binary.AppendUvarint(b, uint64(len(c.Chain)))
	b = append(b, c.Chain...)
	b = append(b, c.ID...)
	return base64.RawURLEncoding.EncodeToString(b)
}

var sortCodes = []struct{ key, dir string }{{"time", "desc"}, {"time", "asc"}, {"value", "desc"}, {"value", "asc"}}

func sortCode(key, dir string) byte {
	for i, s := range sortCodes {
		if s.key == key && s.dir == dir {
			return byte(i)
		}
	}
	return 0xff
}

// DecodeCursor parses a cursor's text; any damage is a 400 naming cursor.
func DecodeCursor(s string) (Cursor, error) {
	bad := func(rule string) (Cursor, error) {
		return Cursor{}, params.Errorf("cursor", "%s (pass the nextCursor of the previous page unchanged)", rule)
	}
	if s == "" || len(s) > MaxCursor {
		return bad("must be 1 to 512 characters")
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return bad("is not a cursor")
	}
	if len(b) < 18 || (b[0] != cursorVersion && b[0] != 1) || int(b[1]) >= len(sortCodes) {
		return bad("is not a cursor")
	}
	c := Cursor{SortKey: sortCodes[b[1]].key, SortDir: sortCodes[b[1]].dir,
		Key: int64(binary.BigEndian.Uint64(b[2:])), Filter: binary.BigEndian.Uint64(b[10:]), Ahead: -1, v1: b[0] == 1}
	rest := b[18:]
	ties, n := binary.Uvarint(rest)
	if n <= 0 || ties < 1 || ties > MaxWindow {
		return bad("is not a cursor")
	}
	rest = rest[n:]
	if !c.v1 {
		ahead, n := binary.Uvarint(rest)
		if n <= 0 || ahead > MaxWindow { // Ahead is below the count cap (10,000, as the window)
			return bad("is not a cursor")
		}
		c.Ahead, rest = int(ahead)-1, rest[n:]
	}
	cl, n := binary.Uvarint(rest)
	if n <= 0 || cl == 0 || cl > 32 || uint64(len(rest)-n) <= cl {
		return bad("is not a cursor")
	}
	c.Ties = int(ties)
	c.Chain, c.ID = string(rest[n:n+int(cl)]), string(rest[n+int(cl):])
	if !utf8.ValidString(c.Chain) || !utf8.ValidString(c.ID) || len(c.ID) > 256 {
		return bad("is not a cursor")
	}
	if c.SortKey == "value" && math.IsNaN(math.Float64frombits(uint64(c.Key))) {
		return bad("is not a cursor")
	}
	if c.Encode() != s { // one text per cursor: no trailing bits, no varint padding
		return bad("is not a cursor")
	}
	return c, nil
}

// paging parses includeCursors and cursor into t (after its sort and page are parsed).
func paging(q url.Values, t *Transfers) error {
	var err error
	if t.IncludeCursors, err = params.Bool(q, "includeCursors", false); err != nil {
		return err
	}
	s, err := params.One(q, "cursor")
	if err != nil {
		return err
	}
	if (t.IncludeCursors || s != "") && t.SortKey == "usd" {
		return params.Errorf("includeCursors", "cursors page by sortKey time or value, not usd")
	}
	if s == "" {
		return nil
	}
	c, err := DecodeCursor(s)
	if err != nil {
		return err
	}
	if c.SortKey != t.SortKey || c.SortDir != t.SortDir {
		return params.Errorf("cursor", "was issued for sortKey=%s&sortDir=%s; give the same sort", c.SortKey, c.SortDir)
	}
	if c.Filter != FilterHash(q) {
		return params.Errorf("cursor", "was issued for other filters; give the query it came from")
	}
	if t.Offset != 0 {
		return params.Errorf("offset", "must be 0 with a cursor (the cursor is the position)")
	}
	t.Cursor = &c
	return nil
}
