// Command intelligence runs the intelligence service. Subcommands:
//
//	intelligence [serve]                        serve the API and run consumers and heuristics
//	intelligence migrate                        migrate the intel schema
//	intelligence import graphsense <dir|file>…  import GraphSense actor and tag packs
//	intelligence import curated <file|->        import the operator's curated JSON or CSV
//	intelligence republish                      publish every attribution again
//	intelligence heuristics                     run one heuristics pass
//
// Imports and heuristic passes publish their changes when INTEL_KAFKA_BROKERS is set; a running
// service publishes them otherwise.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/chainintel/chainintel/libs/service"
	intelligence "github.com/chainintel/chainintel/services/intelligence"
)

func main() {
	service.Binary[intelligence.Config]{
		Name: intelligence.Name, Load: intelligence.LoadConfig, Run: intelligence.Run, Migrate: intelligence.Migrate,
		Extra: map[string]service.Command[intelligence.Config]{
			"import":     importCmd,
			"republish":  republish,
			"heuristics": heuristics,
		},
	}.Main()
}

const usage = "want serve, migrate, import graphsense <dir|file>..., import curated <file|->, republish or heuristics"

func importCmd(ctx context.Context, cfg intelligence.Config, _ *slog.Logger, args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("import: %s", usage)
	}
	var rep intelligence.Report
	var err error
	switch args[0] {
	case "graphsense":
		rep, err = intelligence.ImportGraphSense(ctx, cfg, args[1:]...)
	case "curated":
		if len(args) != 2 {
			return fmt.Errorf("import curated takes one file (or - for standard input)")
		}
		var r io.Reader = os.Stdin
		if args[1] != "-" {
			f, err := os.Open(args[1])
			if err != nil {
				return err
			}
			defer f.Close()
			r = f
		}
		rep, err = intelligence.ImportCurated(ctx, cfg, r)
	default:
		return fmt.Errorf("import %q: %s", args[0], usage)
	}
	if len(rep.Sources) > 0 {
		if perr := printJSON(rep); perr != nil {
			return perr
		}
	}
	return err
}

func republish(ctx context.Context, cfg intelligence.Config, _ *slog.Logger, _ []string) error {
	n, err := intelligence.Republish(ctx, cfg)
	if err != nil {
		return err
	}
	return printJSON(map[string]int{"published": n})
}

func heuristics(ctx context.Context, cfg intelligence.Config, _ *slog.Logger, _ []string) error {
	sum, err := intelligence.RunHeuristics(ctx, cfg)
	if err != nil {
		return err
	}
	return printJSON(sum)
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
