// Package balances serves balances, history, portfolios, token balances and holders from exact balance observations.
package balances

import (
	"context"
	"log/slog"

	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/balances/internal/config"
	svchttp "github.com/chainintel/chainintel/services/balances/internal/http"
	"github.com/chainintel/chainintel/services/balances/migrations"
)

// Name is the service name.
const Name = "balances"

// Config is the service's configuration.
type Config = config.Config

// Deps are what a caller may hand the service instead of letting it build them.
type Deps = service.Deps

// LoadConfig reads the configuration from BALANCES_* environment variables.
func LoadConfig() (Config, error) { return config.Load() }

// Migrate applies the balances schema's migrations.
func Migrate(ctx context.Context, cfg Config, log *slog.Logger) error {
	return service.Migrate(ctx, cfg.Postgres, migrations.Schema, migrations.FS, log)
}

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	s, err := service.New(ctx, Name, cfg.Base, deps)
	if err != nil {
		return err
	}
	service.LogConfig(s.Log, cfg)
	pool, err := s.Postgres(ctx, cfg.Postgres)
	if err != nil {
		return err
	}
	_ = pool
	e := s.Engine()
	svchttp.Register(e)
	return s.Run(ctx, e)
}
