// Command edge runs the public edge of chainintel: `edge` serves, `edge migrate` migrates its
// schema, `edge admin ...` administers orgs, users, keys and tiers (run `edge admin help`).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/edge"
)

func main() {
	service.Binary[edge.Config]{
		Name: edge.Name, Load: edge.LoadConfig, Run: edge.Run, Migrate: edge.Migrate,
		Extra: map[string]service.Command[edge.Config]{
			"admin": func(ctx context.Context, cfg edge.Config, _ *slog.Logger, args []string) error {
				return admin(ctx, cfg, args, os.Stdout)
			},
		},
	}.Main()
}
