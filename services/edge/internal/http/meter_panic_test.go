package http

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/internal/metering"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
)

// settleLog keeps what a call settled and recorded: the ledger's side (Settle, passed on to a
// real ledger, whose holds it checks) and the producer's (Record), each with the usage event id
// it was given.
type settleLog struct {
	*metering.CreditLedger
	mu       sync.Mutex
	settled  map[string]int64 // event id -> credits settled
	recorded map[string]*eventsv1.UsageCall
}

func (l *settleLog) Settle(h metering.Hold, e usage.Entity, n int64, at time.Time, id string) int64 {
	l.mu.Lock()
	l.settled[id] += n
	l.mu.Unlock()
	return l.CreditLedger.Settle(h, e, n, at, id)
}

// emptyLedger is a durable ledger that has counted nothing.
type emptyLedger struct{}

func (emptyLedger) PeriodTotals(_ context.Context, ps []usage.PeriodRef) ([]usage.Total, error) {
	return make([]usage.Total, len(ps)), nil
}

func (emptyLedger) Counted(_ context.Context, ps []usage.PeriodRef, _ []string) ([]usage.Total, map[string]bool, error) {
	return make([]usage.Total, len(ps)), map[string]bool{}, nil
}

func (l *settleLog) Record(id string, c *eventsv1.UsageCall) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recorded[id] = c
	return true
}

// A handler that panics, before answering or after its header went out (the reverse proxy
// aborts a response the service cut short with http.ErrAbortHandler), still settles its hold
// (the ledger holds nothing after it, and counts what the call cost) and records its usage
// event with the id it settled under, and the panic goes on: a settled call whose event is
// never recorded would stay in the replica's live total.
func TestPanickingHandlerSettlesAndRecords(t *testing.T) {
	rt := routes.Route{Method: "GET", Pattern: "/paid", Credits: 3, Unit: routes.PerCall}
	cases := []struct {
		name    string
		handler http.HandlerFunc
		status  int32
		credits int64
	}{
		{"before the header", func(http.ResponseWriter, *http.Request) { panic("boom") }, 500, 0},
		{"after the header", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(200)
			panic(http.ErrAbortHandler)
		}, 200, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log := &settleLog{CreditLedger: metering.NewCreditLedger(nil, emptyLedger{}, metering.LedgerOptions{}),
				settled: map[string]int64{}, recorded: map[string]*eventsv1.UsageCall{}}
			m := Metering{Tiers: smallTier(t), Ledger: log, Usage: log}
			h := m.Middleware(rt, tc.handler)
			req := httptest.NewRequest("GET", "/paid", nil)
			id := httpx.Identity{KeyID: "k", UserID: "u1", Role: httpx.RoleIndividual, Tier: "small"}
			var recovered any
			func() {
				defer func() { recovered = recover() }()
				h.ServeHTTP(httptest.NewRecorder(), req.WithContext(httpx.WithIdentity(req.Context(), id)))
			}()
			if recovered == nil {
				t.Fatal("the panic did not go on")
			}
			if len(log.settled) != 1 || len(log.recorded) != 1 {
				t.Fatalf("settled %v, recorded %v: want one call settled and its event recorded", log.settled, log.recorded)
			}
			for eventID, credits := range log.settled {
				c := log.recorded[eventID]
				if c == nil {
					t.Fatalf("settled as %s, recorded as %v", eventID, log.recorded)
				}
				got := [3]int64{credits, c.GetCredits(), int64(c.GetStatus())}
				if want := [3]int64{tc.credits, tc.credits, int64(tc.status)}; !reflect.DeepEqual(got, want) {
					t.Fatalf("settled, recorded credits and status %v, want %v", got, want)
				}
			}
			after, err := log.Reserve(context.Background(), usage.BilledEntity("u1", ""), time.Now(), 0, -1)
			if err != nil || after.Held != 0 || after.Used != tc.credits {
				t.Fatalf("the ledger after the call: held %d, used %d (%v), want 0 and %d", after.Held, after.Used, err, tc.credits)
			}
		})
	}
}
