package edge_test

import (
	"context"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/edge"
	"github.com/chainintel/chainintel/services/edge/internal/keys"
)

// A flood of made-up keys from one address, beside a valid key from the same address that the
// replica has not cached (as after its 1 s local TTL, and with the Redis cache entry gone, so the
// database answers): the bad keys get 401 then 429, the valid key is served every time.
func TestBadKeyFloodNeverRefusesAValidKey(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true, tune: func(c *edge.Config) {
		c.FailedKeyRate, c.FailedKeyBurst, c.FailedKeyLookups = 1, 5, 2
	}})
	good, _ := e.key(t, edge.KeySpec{Tier: "api"})
	h := keys.Hash(good)
	statuses := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < 4; w++ { // the flood, concurrently
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				r := e.get("/chains", "ci_made_up_"+strconv.Itoa(w)+"_"+strconv.Itoa(i))
				mu.Lock()
				statuses[r.Status]++
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < 40; i++ {
		e.Verifier.Forget(h)
		if i%2 == 1 { // the database answers, not the Redis cache
			if err := e.rdb.Del(context.Background(), "edge:key:"+hex.EncodeToString(h[:])).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if r := e.get("/chains", good); r.Status != http.StatusOK {
			t.Fatalf("valid key, call %d, beside the flood: %d %s", i, r.Status, r.Body)
		}
	}
	wg.Wait()
	if statuses[401] < 1 || statuses[429] == 0 || statuses[401]+statuses[429] != 100 {
		t.Fatalf("bad keys: %v", statuses)
	}
	// Past the flood the address is still over its budget: made-up keys get 429, a valid key it
	// never presented before gets 200. The rate is 1/s, so a failure may have refilled since the
	// flood's first (on a loaded machine, several): no more failures than that are allowed.
	for i := 0; ; i++ {
		r := e.get("/chains", "ci_made_up_after_"+strconv.Itoa(i))
		if r.Status == http.StatusTooManyRequests {
			break
		}
		if r.Status != http.StatusUnauthorized {
			t.Fatalf("bad key after the flood: %d %s", r.Status, r.Body)
		}
		if statuses[401]++; statuses[401] > 5+int(time.Since(start).Seconds()) {
			t.Fatalf("bad keys: %d failures allowed in %s, over the burst of 5 and 1/s", statuses[401], time.Since(start))
		}
	}
	fresh, _ := e.key(t, edge.KeySpec{Tier: "free"})
	if r := e.get("/chains", fresh); r.Status != http.StatusOK {
		t.Fatalf("a new valid key after the flood: %d %s", r.Status, r.Body)
	}
}
