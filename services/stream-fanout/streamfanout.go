// Package streamfanout streams matching transfers to WebSocket subscribers, with sessions and replay buffers in Redis.
package streamfanout

import (
	"context"
	"log/slog"

	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/config"
	svchttp "github.com/chainintel/chainintel/services/stream-fanout/internal/http"
)

// Name is the service name.
const Name = "stream-fanout"

// Config is the service's configuration.
type Config = config.Config

// Deps are what a caller may hand the service instead of letting it build them.
type Deps = service.Deps

// LoadConfig reads the configuration from STREAM_* environment variables.
func LoadConfig() (Config, error) { return config.Load() }

// Migrate is a no-op: stream-fanout keeps its state (sessions, replay buffers, quotas) in Redis and owns
// no PostgreSQL schema. It exists so every deployable answers the same subcommands.
func Migrate(ctx context.Context, cfg Config, log *slog.Logger) error {
	if log != nil {
		log.InfoContext(ctx, "nothing to migrate: stream-fanout owns no PostgreSQL schema")
	}
	return nil
}

// Run serves until ctx ends.
func Run(ctx context.Context, cfg Config, deps Deps) error {
	s, err := service.New(ctx, Name, cfg.Base, deps)
	if err != nil {
		return err
	}
	service.LogConfig(s.Log, cfg)
	rdb, err := s.Redis(ctx, cfg.Redis)
	if err != nil {
		return err
	}
	_ = rdb
	e := s.Engine()
	svchttp.Register(e)
	return s.Run(ctx, e)
}
