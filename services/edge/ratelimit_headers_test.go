package edge_test

import (
	"strconv"
	"testing"

	"github.com/chainintel/chainintel/services/edge"
)

// X-RateLimit-Remaining never exceeds X-RateLimit-Limit, which is the budget when full (the
// burst), for every tier and rate class.
func TestRateLimitRemainingWithinLimit(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true})
	for _, name := range e.Tiers.Names() {
		tier, _ := e.Tiers.Get(name)
		k, _ := e.key(t, edge.KeySpec{Tier: tier.Name})
		for _, c := range []struct {
			path, key string
			limit     int
		}{{"/chains", k, tier.Burst}, {"/transfers", k, tier.HeavyRate}, {"/health", "", e.cfg.PublicBurst}} {
			for i := 0; i < 3; i++ {
				r := e.get(c.path, c.key)
				lim, err1 := strconv.Atoi(r.Header.Get("X-RateLimit-Limit"))
				rem, err2 := strconv.Atoi(r.Header.Get("X-RateLimit-Remaining"))
				if err1 != nil || err2 != nil || lim != c.limit || rem > lim || rem < 0 {
					t.Fatalf("%s %s: Limit %q Remaining %q, want Limit %d and Remaining within it", tier.Name, c.path,
						r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"), c.limit)
				}
			}
		}
	}
}
