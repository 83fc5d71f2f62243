package edge_test

import (
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge"
)

// Dates a window cannot hold (JSON writes years 0 to 9999; nothing is recorded before 1970),
// before or after the offset and the period, are a 400 naming the parameter, never a 500.
func TestEndpointCallsDatesOutOfRange(t *testing.T) {
	e := newEdge(t, edgeOpts{noConsume: true})
	k, _ := e.key(t, edge.KeySpec{Tier: "basic", Role: httpx.RoleIndividual})
	const rng = `(1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z)`
	for q, want := range map[string]string{
		"end_date=0000-01-01T00:00:00Z":                                        `{"error":"end_date: \"0000-01-01T00:00:00Z\" is out of range ` + rng + `"}`,
		"end_date=9999-12-31T23:59:59-10:00":                                   `{"error":"end_date: \"9999-12-31T23:59:59-10:00\" is out of range ` + rng + `"}`,
		"period=7d&end_date=1970-01-03T00:00:00Z":                              `{"error":"end_date: the 7d period before it starts out of range ` + rng + `"}`,
		"start_date=0000-01-01T00:00:00%2B01:00&end_date=0000-01-02T00:00:00Z": `{"error":"start_date: \"0000-01-01T00:00:00+01:00\" is out of range ` + rng + `"}`,
	} {
		if r := e.get("/analytics/endpoint-calls?"+q, k); r.Status != 400 || r.Body != want+"\n" {
			t.Errorf("%s: %d %s, want 400 %s", q, r.Status, r.Body, want)
		}
	}
	if r := e.get("/analytics/endpoint-calls?end_date=9999-12-31T23:59:59Z", k); r.Status != 200 {
		t.Errorf("the last second of 9999: %d %s", r.Status, r.Body)
	}
}
