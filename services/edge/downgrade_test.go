package edge_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge"
)

// A user whose key of a greater tier was revoked and who now calls with a key of a smaller tier
// without overage keeps the greater tier's included credits for the rest of the period: the
// billing record (credit-periods), the credit check, X-Credits-Period-Limit and intel-usage's
// totalLimit all say the same figure.
func TestDowngradeKeepsThePeriodsIncludedCredits(t *testing.T) {
	table := filepath.Join(t.TempDir(), "tiers.yaml")
	if err := writeFile(table, `
tiers:
  - {name: small, rate: 1000, burst: 1000, heavyRate: 1, includedCredits: 1000, overage: false}
  - {name: big, rate: 1000, burst: 1000, heavyRate: 1, includedCredits: 5000, overage: true}
`); err != nil {
		t.Fatal(err)
	}
	// The big key's first call caches the period's record before the consumer has written it;
	// a short TTL lets the small key's check see the record once written.
	e := newEdge(t, edgeOpts{tune: func(c *edge.Config) { c.TiersFile, c.CreditsIncludedTTL = table, 100*time.Millisecond }})
	big, bigInfo := e.key(t, edge.KeySpec{Tier: "big", Role: httpx.RoleIndividual})
	if r := e.get("/transfers?limit=10&rows=10", big); r.Status != 200 || r.Header.Get("X-Credits-Period-Limit") != "5000" {
		t.Fatalf("big key: %d %v", r.Status, r.Header)
	}
	period(t, e, big, 20)
	if err := e.admin.Revoke(context.Background(), bigInfo.ID, ""); err != nil {
		t.Fatal(err)
	}
	small, _ := e.key(t, edge.KeySpec{Tier: "small", Role: httpx.RoleIndividual, UserID: bigInfo.UserID})
	if p := period(t, e, small, 20); p.CreditsIncluded != 5000 {
		t.Fatalf("billing record after the downgrade: %+v, want 5000 included", p)
	}
	// 4,000 credits: past the small tier's 1,000, within the period's 5,000. The check reads the
	// record through a cache; a refused call costs nothing, so it is sent again until the
	// check has the record's figure (never, when the check keeps the key's own tier).
	const enriched = "/intelligence/address_enriched/batch/all?rows=1000"
	eventually(t, 30*time.Second, func() error {
		r := e.send("POST", enriched, small, batchBody("f", 1000, true))
		if r.Status != 200 || r.Header.Get("X-Credits-Used") != "4000" || r.Header.Get("X-Credits-Period-Limit") != "5000" {
			return fmt.Errorf("%d %v %s", r.Status, r.Header, r.Body)
		}
		return nil
	})
	r := e.get("/swaps?limit=1000&rows=1000", small)
	if want := `{"error":"credit limit reached: this call can cost up to 2000 credits (2 per row, up to 1000 rows) and 980 of the period's 5000 are left"}` + "\n"; r.Status != 429 || r.Body != want ||
		r.Header.Get("X-Credits-Period-Limit") != "5000" {
		t.Fatalf("past the period's credits: %d %v %s", r.Status, r.Header, r.Body)
	}
	if p := period(t, e, small, 4020); p.CreditsIncluded != 5000 {
		t.Fatalf("billing record: %+v", p)
	}
	iu := decode[struct {
		TotalLimit int64 `json:"totalLimit"`
	}](t, e.get("/subscription/intel-usage", small))
	if strconv.FormatInt(iu.TotalLimit, 10) != "5000" {
		t.Fatalf("intel-usage totalLimit %d, want 5000", iu.TotalLimit)
	}
}
