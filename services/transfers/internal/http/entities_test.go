package http_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	intelclient "github.com/chainintel/chainintel/services/intelligence/client"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	svchttp "github.com/chainintel/chainintel/services/transfers/internal/http"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
	"github.com/gin-gonic/gin"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// intel is intelligence as transfers asks it about names: the entities it holds (quiet has no
// attributed address, so the read model does not know it) and its entity types; down, every
// call fails.
type intel struct {
	mu    sync.Mutex
	down  bool
	calls [][]string
}

func (f *intel) Entities(_ context.Context, ids []string) (intelclient.Entities, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, slices.Clone(ids))
	if f.down {
		return intelclient.Entities{}, errors.New("connection refused")
	}
	out := intelclient.Entities{Known: map[string]bool{}, Types: []string{"cex", "gambling", "miner"}}
	for _, id := range ids {
		if id == "quiet" || id == "quiet2" {
			out.Known[id] = true
		}
	}
	return out, nil
}

func entitiesRouter(t *testing.T, f *intel, rd *sdkmetric.ManualReader) *gin.Engine {
	e := world(t)
	cs, _ := chains.NewSet(nil)
	r := httpx.NewEngine(httpx.EngineOptions{Service: "transfers"})
	r.Use(httpx.IdentityMiddleware(httpx.NewSigner(secret)))
	o := app.EntityOptions{Meter: sdkmetric.NewMeterProvider(sdkmetric.WithReader(rd)).Meter("t")}
	svchttp.Register(r, app.New(e.store, e.render, cs, app.WithEntities(f, o)),
		query.Parser{Chains: cs, Now: func() time.Time { return tw.Now }})
	return r
}

// entityUnchecked is the transfers_entity_checks_unchecked_total counter.
func entityUnchecked(t *testing.T, rd *sdkmetric.ManualReader) int64 {
	t.Helper()
	return counter(t, rd, "transfers_entity_checks_unchecked_total")
}

// An entity the read model does not know (it has no attributed address) but intelligence does
// matches nothing (200) in a filter, behind deposit: and in the path; one intelligence does not
// know either is a 404, and so is a type neither knows a 400; a type only intelligence's
// entities have matches nothing. Intelligence unable to answer leaves the name unchecked (200,
// counted). Whole bodies.
func TestEntitiesKnownToIntelligence(t *testing.T) {
	f := &intel{}
	rd := sdkmetric.NewManualReader()
	r := entitiesRouter(t, f, rd)
	const empty = `{"transfers":[],"count":0}`
	cases := []struct {
		path   string
		status int
		body   string
	}{
		{"/transfers?from=quiet", 200, empty},
		{"/transfers?from=deposit:quiet", 200, empty},
		{"/counterparties/entity/quiet", 200, `{}`},
		{"/transfers?from=nope", 404, `{"error":"from: unknown entity \"nope\""}`},
		{"/transfers?from=deposit:nope", 404, `{"error":"from: unknown entity \"nope\" in deposit:nope"}`},
		{"/counterparties/entity/nope", 404, `{"error":"unknown entity \"nope\""}`},
		{"/transfers?from=type:miner", 200, empty},
		{"/transfers?to=type:gambling", 200, empty},
		{"/transfers?from=type:nope", 400, `{"error":"from: type:nope is not an entity type (one of cex, dex, fund, gambling, individual, miner, user)"}`},
	}
	for _, c := range cases {
		w := serve(r, &alice, "GET", c.path, "")
		if w.Code != c.status || w.Body.String() != c.body {
			t.Errorf("%s: got %d %s\nwant %d %s", c.path, w.Code, w.Body.String(), c.status, c.body)
		}
	}
	if n := entityUnchecked(t, rd); n != 0 {
		t.Errorf("unchecked counter %d, want 0", n)
	}

	f.mu.Lock()
	f.down = true
	f.mu.Unlock()
	for _, path := range []string{"/transfers?from=fresh", "/counterparties/entity/fresh2"} {
		w := serve(r, &alice, "GET", path, "")
		if want := map[string]string{"/transfers?from=fresh": empty, "/counterparties/entity/fresh2": `{}`}[path]; w.Code != 200 || w.Body.String() != want {
			t.Errorf("intelligence down, %s: got %d %s, want 200", path, w.Code, w.Body.String())
		}
	}
	w := serve(r, &alice, "GET", "/transfers?from=nope", "")
	if w.Code != 404 {
		t.Errorf("intelligence down, a cached unknown entity: %d %s, want 404", w.Code, w.Body.String())
	}
	if n := entityUnchecked(t, rd); n != 2 {
		t.Errorf("unchecked counter %d, want 2 (one a request taken unchecked)", n)
	}
}
