package ws

import (
	"testing"
	"time"
)

func TestLeaseGrowsWhileSpentQuicklyAndFallsBack(t *testing.T) {
	q := &quotas{lease: 16}
	kq := &keyQuota{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var got []int64
	for i := range 8 {
		got = append(got, q.nextLease(kq, t0.Add(time.Duration(i)*time.Millisecond)))
	}
	want := []int64{16, 32, 64, 128, 256, 512, 1024, 1024}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("leases %v, want %v", got, want)
		}
	}
	if n := q.nextLease(kq, t0.Add(time.Minute)); n != 16 {
		t.Fatalf("lease after a quiet minute %d, want the base 16", n)
	}
}
