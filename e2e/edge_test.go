package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/edge"
)

// The edge's refusals through the running platform: 401, 403 (tier, role), 429 with
// Retry-After, and a revoked key refused within a second.
func TestEdgeRefusals(t *testing.T) {
	p := Get(t)
	for _, key := range []string{"", "ci_not-a-key"} {
		r := p.Do(t, http.MethodGet, "/chains", key, nil)
		if r.Status != 401 || r.Error() != "error validating API key" {
			t.Fatalf("key %q: %d %s", key, r.Status, r.Body)
		}
	}

	basic := p.NewKey(t, "basic", "org_admin")
	r := p.Do(t, http.MethodGet, "/transfers/histogram?base=binance", basic, nil)
	if r.Status != 403 || r.Error() != "/transfers/histogram needs the API tier; the basic tier does not include it" {
		t.Fatalf("histogram on basic: %d %s", r.Status, r.Body)
	}
	member := p.NewKey(t, "pro", "org_member")
	r = p.Do(t, http.MethodGet, "/analytics/credit-periods", member, nil)
	if r.Status != 403 || r.Error() != "credit periods are visible to org admins only" {
		t.Fatalf("credit periods as a member: %d %s", r.Status, r.Body)
	}

	// A burst over the free tier's budget (5/s, burst 10): 104 calls, so that only a very slow
	// machine (more than 18 s for them) is needed for none to be refused.
	free := p.NewKey(t, "free", "individual")
	var mu sync.Mutex
	statuses := map[int]int{}
	var limited Response
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 13; i++ {
				r := p.Do(t, http.MethodGet, "/chains", free, nil)
				mu.Lock()
				statuses[r.Status]++
				if r.Status == 429 {
					limited = r
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if statuses[200] < 10 || statuses[429] == 0 || statuses[200]+statuses[429] != 104 {
		t.Fatalf("burst of 104 on a free key: %v", statuses)
	}
	if limited.Error() != "too many requests" {
		t.Fatalf("429 body %s", limited.Body)
	}
	if s, err := strconv.Atoi(limited.Header.Get("Retry-After")); err != nil || s < 1 {
		t.Fatalf("Retry-After %q", limited.Header.Get("Retry-After"))
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		if limited.Header.Get(h) == "" {
			t.Fatalf("429 without %s", h)
		}
	}

	// Revocation reaches the edge (the bound is a hang guard, not a speed claim).
	doomed := p.NewKey(t, "pro", "individual")
	if r := p.Do(t, http.MethodGet, "/chains", doomed, nil); r.Status != 200 {
		t.Fatalf("fresh key: %d %s", r.Status, r.Body)
	}
	p.RevokeKey(t, doomed)
	revoked := time.Now()
	for {
		r := p.Do(t, http.MethodGet, "/chains", doomed, nil)
		if r.Status == 401 {
			break
		}
		if time.Since(revoked) > time.Minute {
			t.Fatalf("revoked key still accepted after a minute: %d", r.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// After a burst of calls, the analytics endpoints report exactly what the credit headers said.
func TestEdgeAnalyticsAfterBurst(t *testing.T) {
	p := Get(t)
	key, _ := p.NewAccountKey(t, edge.KeySpec{Tier: "api", Role: "org_admin"})
	paths := []string{"/chains", "/chains", "/chains", "/chains", "/chains",
		"/user/labels", "/intelligence/address/0x28c6c06298d514db089934071355e5743bf21d60",
		"/tag/exchange-hot-wallet/summary", "/token/trending"}
	wantCalls, wantCredits := map[string]int64{}, map[string]int64{}
	patterns := map[string]string{
		"/chains":                          "/chains",
		"/user/labels":                     "/user/labels",
		"/tag/exchange-hot-wallet/summary": "/tag/{id}/summary",
		"/token/trending":                  "/token/trending",
		"/intelligence/address/0x28c6c06298d514db089934071355e5743bf21d60": "/intelligence/address/{address}",
	}
	var total int64
	for _, path := range paths {
		r := p.Do(t, http.MethodGet, path, key, nil)
		used, err := strconv.ParseInt(r.Header.Get("X-Credits-Used"), 10, 64)
		if err != nil {
			t.Fatalf("%s: %d without X-Credits-Used: %v", path, r.Status, r.Header)
		}
		if r.Status >= 400 && used != 0 {
			t.Fatalf("%s: failed call (%d) charged %d", path, r.Status, used)
		}
		total += used
		if got := r.Header.Get("X-Credits-Period-Used"); got != strconv.FormatInt(total, 10) {
			t.Fatalf("%s: X-Credits-Period-Used %s, want %d", path, got, total)
		}
		wantCalls[patterns[path]]++
		wantCredits[patterns[path]] += used
	}
	Eventually(t, 30*time.Second, func() error {
		var ec struct {
			Period     string `json:"period"`
			DataPoints []struct {
				TotalCredits    int64            `json:"totalCredits"`
				CallBreakdown   map[string]int64 `json:"callBreakdown"`
				CreditBreakdown map[string]int64 `json:"creditBreakdown"`
			} `json:"dataPoints"`
		}
		r := p.Do(t, http.MethodGet, "/analytics/endpoint-calls?period=24h", key, nil)
		r.JSON(t, &ec)
		calls, credits := map[string]int64{}, map[string]int64{}
		var sum int64
		for _, dp := range ec.DataPoints {
			for k, v := range dp.CallBreakdown {
				calls[k] += v
			}
			for k, v := range dp.CreditBreakdown {
				credits[k] += v
			}
			sum += dp.TotalCredits
		}
		for k, v := range wantCalls {
			if calls[k] != v || credits[k] != wantCredits[k] {
				return fmt.Errorf("%s: %d calls / %d credits, want %d / %d (%s)", k, calls[k], credits[k], v, wantCredits[k], r.Body)
			}
		}
		if sum != total {
			return fmt.Errorf("total credits %d, want %d", sum, total)
		}
		return nil
	})
	var periods []struct {
		CreditsUsed int64  `json:"creditsUsed"`
		EntityType  string `json:"entityType"`
		Status      string `json:"status"`
	}
	r := p.Do(t, http.MethodGet, "/analytics/credit-periods", key, nil)
	r.JSON(t, &periods)
	if r.Status != 200 || len(periods) != 1 || periods[0].CreditsUsed != total || periods[0].EntityType != "org" || periods[0].Status != "open" {
		t.Fatalf("credit periods: %d %s (want %d used)", r.Status, r.Body, total)
	}
	r = p.Do(t, http.MethodGet, "/analytics/endpoint-calls?start_date=2025-01-01T00:00:00Z&end_date=2026-06-01T00:00:00Z", key, nil)
	if r.Status != 400 || r.Error() != "start_date, end_date: the range must be at most 366 days" {
		t.Fatalf("over 366 days: %d %s", r.Status, r.Body)
	}
}
