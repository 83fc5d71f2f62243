package query

import (
	"math"
	"net/url"
	"strings"
	"testing"
)

func TestCursorRoundTrip(t *testing.T) {
	q := url.Values{"base": {"binance"}, "flow": {"in"}}
	for _, c := range []Cursor{
		{SortKey: "time", SortDir: "desc", Key: 1767225600123456, Chain: "ethereum", ID: "0xab_3", Ties: 1, Filter: FilterHash(q)},
		{SortKey: "value", SortDir: "asc", Key: int64(math.Float64bits(-2.5)), Chain: "solana", ID: strings.Repeat("z", 256), Ties: MaxWindow, Ahead: -1},
		{SortKey: "time", SortDir: "asc", Key: 1, Chain: "base", ID: "0x1_0", Ties: 2, Ahead: MaxWindow - 1},
	} {
		got, err := DecodeCursor(c.Encode())
		if err != nil || got != c {
			t.Errorf("%+v: decoded %+v, %v", c, got, err)
		}
	}
	// A version 1 cursor (no Ahead) is accepted, with Ahead unknown, and is its own text.
	v1 := "AQAABi0KhpN-wGvyKCkavdzSAQR0cm9uMDIyZjMxOTA2YWVjYzJmMGI1MmY5ZGYzNTI3ZjYwZjc0ZDc1ZDkwNzY3OGYwYTY0ZThjMDNkZTJiZjYzYjFiZl8w"
	if c, err := DecodeCursor(v1); err != nil || c.Ahead != -1 || c.Chain != "tron" || c.Encode() != v1 {
		t.Errorf("version 1 cursor: %+v, %v", c, err)
	}
	// The filters' hash ignores order and the paging parameters.
	a := FilterHash(url.Values{"flow": {"in"}, "base": {"b", "a"}, "limit": {"5"}, "cursor": {"x"}})
	if b := FilterHash(url.Values{"base": {"a", "b"}, "flow": {"in"}, "includeCursors": {"true"}}); a != b {
		t.Errorf("same filters hash %x and %x", a, b)
	}
	if b := FilterHash(url.Values{"base": {"a", "b"}, "flow": {"out"}}); a == b {
		t.Error("other filters hash the same")
	}
}

// FuzzCursor: any text either fails with a 400 naming cursor or decodes to a cursor whose
// encoding is that text (one text per cursor), with its fields in bounds.
func FuzzCursor(f *testing.F) {
	f.Add(Cursor{SortKey: "time", SortDir: "desc", Key: 1767225600123456, Chain: "ethereum", ID: "0xab_3", Ties: 3, Filter: 42}.Encode())
	f.Add(Cursor{SortKey: "value", SortDir: "asc", Key: int64(math.Float64bits(0.25)), Chain: "base", ID: "x", Ties: 1}.Encode())
	f.Add("")
	f.Add("AQA")
	f.Add(strings.Repeat("_", 40))
	f.Fuzz(func(t *testing.T, s string) {
		c, err := DecodeCursor(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "cursor: ") {
				t.Fatalf("%q: error %v does not name cursor", s, err)
			}
			return
		}
		if c.Encode() != s || c.Ties < 1 || c.Ties > MaxWindow || c.Chain == "" || len(c.Chain) > 32 || len(c.ID) > 256 ||
			c.Ahead < -1 || c.Ahead >= MaxWindow {
			t.Fatalf("%q: accepted %+v", s, c)
		}
	})
}

// The cursor parameters and the /swaps filters join the seeds every parser fuzz target starts
// from.
func init() {
	c := Cursor{SortKey: "time", SortDir: "desc", Key: 1767225600123456, Chain: "ethereum", ID: "0xab_3", Ties: 2,
		Filter: FilterHash(url.Values{"base": {"binance"}})}.Encode()
	seeds = append(seeds, "base=binance&includeCursors=true", "base=binance&cursor="+c, "includeCursors=1&sortKey=usd",
		"cursor="+c+"&offset=50", "senders=binance&receivers=!type:cex&protocols=uniswap_v3&value0Gte=-1&value1Lte=2",
		"base=binance&counterparties=coinbase&flow=self")
}
