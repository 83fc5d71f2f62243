package http

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/internal/metering"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/chainintel/chainintel/services/edge/tiers"
)

// openLedger holds whatever is asked and counts nothing.
type openLedger struct{}

func (openLedger) Reserve(context.Context, usage.Entity, time.Time, int64, int64) (metering.Hold, error) {
	return metering.Hold{OK: true}, nil
}
func (openLedger) Settle(metering.Hold, usage.Entity, int64, time.Time, string) int64 { return 0 }

type dropUsage struct{}

func (dropUsage) Record(string, *eventsv1.UsageCall) bool { return true }

// includedReader counts reads of the billing record and answers n or err.
type includedReader struct {
	reads atomic.Int64
	n     int64
	err   error
}

func (r *includedReader) PeriodIncluded(context.Context, usage.Entity, time.Time) (int64, error) {
	r.reads.Add(1)
	return r.n, r.err
}

func meterCall(t *testing.T, m Metering, rt routes.Route) http.Header {
	t.Helper()
	h := m.Middleware(rt, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }))
	req := httptest.NewRequest("GET", rt.Pattern, nil)
	id := httpx.Identity{KeyID: "k", UserID: "u1", Role: httpx.RoleIndividual, Tier: "small"}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req.WithContext(httpx.WithIdentity(req.Context(), id)))
	return w.Header()
}

func smallTier(t *testing.T) tiers.Table {
	t.Helper()
	table, err := tiers.New([]tiers.Tier{{Name: "small", Rate: 1, Burst: 1, HeavyRate: 1, IncludedCredits: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	return table
}

// With the billing record unreadable, credited calls say the key's own tier and the record is
// not read again on every call; free calls never read it.
func TestMeteringIncludedReadOnlyForCreditedCalls(t *testing.T) {
	r := &includedReader{err: errors.New("postgres down")}
	m := Metering{Tiers: smallTier(t), Ledger: openLedger{}, Usage: dropUsage{},
		Included: usage.NewIncludedCache(r, usage.IncludedOptions{FailTTL: time.Minute})}
	free := routes.Route{Method: "GET", Pattern: "/free", Credits: 0, Unit: routes.PerCall}
	paid := routes.Route{Method: "GET", Pattern: "/paid", Credits: 2, Unit: routes.PerCall}
	for i := 0; i < 5; i++ {
		if got := meterCall(t, m, free).Get("X-Credits-Period-Limit"); got != "1000" {
			t.Fatalf("free call: limit %s", got)
		}
	}
	if n := r.reads.Load(); n != 0 {
		t.Fatalf("free calls read the record %d times", n)
	}
	for i := 0; i < 5; i++ {
		if got := meterCall(t, m, paid).Get("X-Credits-Period-Limit"); got != "1000" {
			t.Fatalf("credited call with the record unreadable: limit %s, want the key's tier", got)
		}
	}
	if n := r.reads.Load(); n != 1 {
		t.Fatalf("5 credited calls read the failing record %d times, want 1", n)
	}
}

// Once a credited call has read the record, free calls say the same figure without reading.
func TestMeteringFreeCallsUseTheCachedRecord(t *testing.T) {
	r := &includedReader{n: 5000}
	m := Metering{Tiers: smallTier(t), Ledger: openLedger{}, Usage: dropUsage{},
		Included: usage.NewIncludedCache(r, usage.IncludedOptions{TTL: time.Minute})}
	paid := routes.Route{Method: "GET", Pattern: "/paid", Credits: 2, Unit: routes.PerCall}
	free := routes.Route{Method: "GET", Pattern: "/free", Credits: 0, Unit: routes.PerCall}
	if got := meterCall(t, m, paid).Get("X-Credits-Period-Limit"); got != "5000" {
		t.Fatalf("credited call: limit %s, want the record's 5000", got)
	}
	if got := meterCall(t, m, free).Get("X-Credits-Period-Limit"); got != "5000" {
		t.Fatalf("free call: limit %s, want the cached 5000", got)
	}
	if n := r.reads.Load(); n != 1 {
		t.Fatalf("%d reads, want 1", n)
	}
}
