// Package inteltest holds what the intelligence service's test packages share: a package
// database migrated to the service's schema, and the service's real HTTP router over it.
package inteltest

import (
	"context"
	"log/slog"
	"net/http"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	svchttp "github.com/chainintel/chainintel/services/intelligence/internal/http"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/chainintel/chainintel/services/intelligence/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Main runs a test package's tests against a database of its own carrying the service's
// migrations; a TestMain passes its result to os.Exit.
func Main(m *testing.M) int {
	return pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, slog.New(slog.DiscardHandler))
	})
}

// Router returns the service's real router (under the service name service, verifying callers
// signed by signer) serving a, after setting a's Store to the package database's and its Cache
// to an attribution cache freshly loaded from it.
func Router(t testing.TB, service string, signer *httpx.Signer, a *app.Service) http.Handler {
	t.Helper()
	st := store.New(pgtest.Pool(t))
	cache := attribution.NewCache(st)
	if err := cache.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.Store, a.Cache = st, cache
	if a.Log == nil {
		a.Log = slog.New(slog.DiscardHandler)
	}
	e := httpx.NewEngine(httpx.EngineOptions{Service: service, Logger: slog.New(slog.DiscardHandler)})
	e.Use(httpx.IdentityMiddleware(signer))
	svchttp.Register(e, a)
	return e
}
