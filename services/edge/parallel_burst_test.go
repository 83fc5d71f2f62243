package edge_test

import (
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge"
)

// Parallel calls of one key on a budget with room are all admitted, and the Remaining they say
// is the budget less what was admitted; a burst past the budget admits exactly the budget (plus
// what refilled at the tier's rate meanwhile).
func TestParallelCallsWithinTheBurstAreAdmitted(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true})
	k, _ := e.key(t, edge.KeySpec{Tier: "api", Role: httpx.RoleIndividual}) // burst 100, 20/s
	tier, _ := e.Tiers.Get("api")
	start := time.Now()
	burst := func(n int) (ok int, rem []int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				r := e.get("/intelligence/address/0x1111111111111111111111111111111111111111", k)
				left, _ := strconv.Atoi(r.Header.Get("X-RateLimit-Remaining"))
				mu.Lock()
				defer mu.Unlock()
				switch r.Status {
				case 200:
					ok++
					rem = append(rem, left)
				case 429:
				default:
					t.Errorf("%d %s", r.Status, r.Body)
				}
			}()
		}
		close(gate)
		wg.Wait()
		return ok, rem
	}
	// The replica has answered for the budget before (its lease grown and its count of what is
	// left old), then the budget refills while the key is idle: the lease must not carry that
	// old count into the next burst.
	for i := 0; i < 10; i++ {
		e.get("/intelligence/address/0x1111111111111111111111111111111111111111", k)
	}
	for time.Since(start) < time.Duration(10*float64(time.Second)/float64(tier.Rate))+time.Second {
		time.Sleep(50 * time.Millisecond) // idle until the 10 refilled, and the lease expired
	}
	start = time.Now()
	refill := func() int { return int(time.Since(start).Seconds() * float64(tier.Rate)) }
	ok, rem := burst(50)
	if ok != 50 {
		t.Fatalf("%d of 50 parallel calls admitted on a budget of %d", ok, tier.Burst)
	}
	ok2, rem2 := burst(100)
	r := refill()
	if total := ok + ok2; total < tier.Burst || total > tier.Burst+r {
		t.Fatalf("bursts of 50 and 100 admitted %d on a budget of %d (refill %d)", total, tier.Burst, r)
	}
	all := append(rem, rem2...)
	sort.Sort(sort.Reverse(sort.IntSlice(all)))
	for i, left := range all {
		if left > tier.Burst-1-i+r {
			t.Fatalf("admitted call %d said %d remaining of %d: %v", i, left, tier.Burst, all)
		}
	}
}
