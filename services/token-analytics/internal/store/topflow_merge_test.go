package store

import (
	"fmt"
	"runtime"
	"testing"
)

// mergeWorld is kept sums of rows addresses of chain rank 1 and a request's transfers: 2,000
// among the first 500 kept addresses and 100 addresses not kept, whatever rows is.
func mergeWorld(rows int) (*keptFlows, [][2][]byte) {
	e := &keptFlows{index: []map[string]int32{{}}}
	for i := range rows {
		s := flowSum{inUSD: float64(rows - i), outUSD: 1}
		e.rows = append(e.rows, flowRow{key: addrKey{n: 1, addr: fmt.Sprintf("0x%07d", i)}, sum: s, total: s.inUSD + s.outUSD})
		e.index[0][e.rows[i].key.addr] = int32(i)
	}
	addr := func(i int) []byte {
		if i%6 == 0 {
			return []byte(fmt.Sprintf("0xnew%04d", i%100))
		}
		return []byte(fmt.Sprintf("0x%07d", i%500))
	}
	ts := make([][2][]byte, 2000)
	for i := range ts {
		ts[i] = [2][]byte{addr(i * 7), addr(i*13 + 1)}
	}
	return e, ts
}

func mergeOnce(e *keptFlows, ts [][2][]byte) []flowRow {
	m := newFlowMerge(e)
	for _, t := range ts {
		m.add(1, t[1], flowSum{inUSD: 2, inValue: 1})
		m.add(1, t[0], flowSum{outUSD: 2, outValue: 1})
	}
	return m.top(50)
}

// mergeBytes is the bytes allocated per merge of ts into e.
func mergeBytes(e *keptFlows, ts [][2][]byte) uint64 {
	const runs = 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		mergeOnce(e, ts)
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

// TestFlowMergeBytesNotOfKeptRows: a request's merge allocates for the addresses its transfers
// touch, not for every kept row: the same transfers over 200 times as many kept rows allocate
// about the same bytes (a slice per kept row would add 33 bytes a row, 6.6 MB here).
func TestFlowMergeBytesNotOfKeptRows(t *testing.T) {
	small, ts := mergeWorld(1000)
	large, _ := mergeWorld(200_000)
	s, l := mergeBytes(small, ts), mergeBytes(large, ts)
	t.Logf("bytes per merge: %d over 1,000 kept rows, %d over 200,000", s, l)
	if l > 2*s {
		t.Fatalf("bytes per merge over 200,000 kept rows %d, over 1,000 %d: grows with the kept rows", l, s)
	}
}

// BenchmarkFlowMerge is a request's merge (2,000 transfers) over kept sums of 1,000 to
// 1,000,000 rows: `go test ./internal/store/ -run '^$' -bench FlowMerge` prints its B/op.
func BenchmarkFlowMerge(b *testing.B) {
	for _, rows := range []int{1000, 100_000, 1_000_000} {
		e, ts := mergeWorld(rows)
		b.Run(fmt.Sprintf("kept=%d", rows), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				mergeOnce(e, ts)
			}
		})
	}
}
