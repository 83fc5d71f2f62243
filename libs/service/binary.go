package service

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/chainintel/chainintel/libs/telemetry"
)

// Configured is what Binary needs of a service's Config: its Base (embedded, so the method is
// promoted).
type Configured interface{ BaseConfig() Base }

// BaseConfig returns the base settings; a Config embedding Base gets it for free.
func (b Base) BaseConfig() Base { return b }

// Command is an extra subcommand of a service binary (admin, import, ...). args are the
// arguments after the subcommand's name.
type Command[C Configured] func(ctx context.Context, cfg C, log *slog.Logger, args []string) error

// Binary describes a service's command line: `<name>` or `<name> serve` runs it,
// `<name> migrate` migrates its schema, and Extra adds subcommands.
type Binary[C Configured] struct {
	Name    string
	Load    func() (C, error)
	Run     func(ctx context.Context, cfg C, deps Deps) error
	Migrate func(ctx context.Context, cfg C, log *slog.Logger) error
	Extra   map[string]Command[C]
	// GCPercent, when set, is the service's GOGC unless the environment sets one (TuneRuntime).
	GCPercent int
}

// Main runs the binary with the process's arguments and signals (see Main).
func (b Binary[C]) Main() { Main(b.Dispatch) }

// Dispatch loads the configuration, builds the logger and runs the subcommand named by args[0].
func (b Binary[C]) Dispatch(ctx context.Context, args []string) error {
	cfg, err := b.Load()
	if err != nil {
		return err
	}
	log := telemetry.NewLogger(os.Stderr, b.Name, cfg.BaseConfig().LogLevel)
	cmd, rest := "serve", []string(nil)
	if len(args) > 0 {
		cmd, rest = args[0], args[1:]
	}
	switch {
	case cmd == "serve":
		TuneRuntime(log, b.GCPercent)
		return b.Run(ctx, cfg, Deps{Logger: log})
	case cmd == "migrate":
		return b.Migrate(ctx, cfg, log)
	case b.Extra[cmd] != nil:
		return b.Extra[cmd](ctx, cfg, log, rest)
	}
	names := []string{"serve", "migrate"}
	for n := range b.Extra {
		names = append(names, n)
	}
	sort.Strings(names[2:])
	return fmt.Errorf("unknown command %q (want %s)", cmd, strings.Join(names, ", "))
}
