// Command chainintel runs the whole platform on one machine (`make run`): every service in one
// process on its own port, an embedded Kafka-protocol broker and Redis unless KAFKA_BROKERS and
// REDIS_URL are set, and PostgreSQL from DATABASE_URL. It prints the edge URL and a dev API key,
// and writes every service's ports to CHAININTEL_STATE_FILE (default dev/tmp/stack.json).
//
//	chainintel            run the platform
//	chainintel status     one screen from the running platform's ops ports: every service's
//	                      health, consumer lag per topic, ingest position per chain, last error;
//	                      exits 1 when a service is unhealthy
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chainintel/chainintel/dev/stack"
	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/libs/telemetry"
)

// env is the local stack's configuration.
type env struct {
	HTTPAddr     string   `env:"CHAININTEL_HTTP_ADDR" envDefault:"127.0.0.1:8080"`
	DevAPIKey    string   `env:"CHAININTEL_DEV_API_KEY" secret:"true"`
	LogLevel     string   `env:"CHAININTEL_LOG_LEVEL" envDefault:"warn"`
	DatabaseURL  string   `env:"DATABASE_URL" envDefault:"postgres://postgres@127.0.0.1:5432/chainintel"`
	KafkaBrokers []string `env:"KAFKA_BROKERS" envSeparator:","`
	RedisURL     string   `env:"REDIS_URL"`
	OTLPEndpoint string   `env:"OTEL_EXPORTER_OTLP_ENDPOINT"`
	Chains       []string `env:"CHAININTEL_CHAINS" envSeparator:","`
	// The tier table of the edge and stream-fanout (both get the one file).
	TiersFile string `env:"CHAININTEL_TIERS_FILE"`
	// Ingest from a JSON-RPC node instead of simulating when EVM_RPC_URL is set.
	EVMRPCURL     string  `env:"EVM_RPC_URL" secret:"true"`
	EVMChain      string  `env:"EVM_CHAIN" envDefault:"ethereum"`
	EVMStartBlock string  `env:"EVM_START_BLOCK" envDefault:"head"`
	SimRate       float64 `env:"CHAININTEL_SIM_RATE" envDefault:"3"`
	// Token list and price exports priced with when indexing a node (EVM_RPC_URL).
	TokenLists  []string `env:"CHAININTEL_TOKEN_LISTS" envSeparator:"," envDefault:"../shared/data/tokens/brave-coingecko.json"`
	PriceCSVDir string   `env:"CHAININTEL_PRICE_CSV_DIR" envDefault:"../shared/data/prices"`
	// StateFile is where the running stack advertises its services' ports for `status`.
	StateFile string `env:"CHAININTEL_STATE_FILE" envDefault:"dev/tmp/stack.json"`
}

func main() { service.Main(run) }

func run(ctx context.Context, args []string) error {
	var e env
	if err := config.Load(&e, ""); err != nil {
		return err
	}
	if len(args) > 0 {
		if args[0] != "status" || len(args) > 1 {
			return fmt.Errorf("unknown arguments %q: want no argument (run) or status", args)
		}
		return status(ctx, e.StateFile)
	}
	// A real broker may take TLS and SASL: the services' KAFKA_TLS* and KAFKA_SASL_* settings,
	// unprefixed.
	var kafka service.Kafka
	if len(e.KafkaBrokers) > 0 {
		if err := config.Load(&kafka, ""); err != nil {
			return err
		}
		if err := kafka.Check(""); err != nil {
			return fmt.Errorf("invalid configuration: %w", err)
		}
	}
	log := telemetry.NewLogger(os.Stderr, "chainintel", e.LogLevel)
	// Parts that log through the default logger (the seeding imports' progress) follow the
	// stack's level and format too.
	slog.SetDefault(log)
	fmt.Fprintln(os.Stderr, "starting chainintel (every service in one process)...")
	st, err := stack.Start(ctx, stack.Options{
		HTTPAddr: e.HTTPAddr, DevAPIKey: e.DevAPIKey, DatabaseURL: e.DatabaseURL, KafkaBrokers: e.KafkaBrokers,
		RedisURL: e.RedisURL, LogLevel: e.LogLevel, OTLPEndpoint: e.OTLPEndpoint, Chains: e.Chains,
		EVMRPCURL: e.EVMRPCURL, EVMChain: e.EVMChain, EVMStartBlock: e.EVMStartBlock, SimRate: e.SimRate,
		TokenLists: e.TokenLists, PriceCSVDir: e.PriceCSVDir, TiersFile: e.TiersFile, Kafka: kafka,
	}, log)
	if err != nil && ctx.Err() != nil {
		// Stopped while starting (Ctrl-C): every service has stopped by now, cleanly.
		fmt.Fprintln(os.Stderr, "chainintel stopped")
		return nil
	}
	if err != nil {
		return err
	}
	if err := st.WriteState(e.StateFile); err != nil {
		log.Warn("state file not written; `chainintel status` will not find this stack", "path", e.StateFile, "error", err)
	} else {
		defer os.Remove(e.StateFile)
	}
	fmt.Printf(`
chainintel is running.

  URL:         %s
  Dev API key: %s

  try: curl -H 'API-Key: %s' %s/chains

  Redis:       %s
  Administer orgs, users, keys and tiers (docs/edge.md, Administration):
%s

Ingest: %s
Services: %s
Press Ctrl-C to stop.
`, st.URL, st.APIKey, st.APIKey, st.URL, st.RedisURL, adminCommand(st, e.TiersFile), ingestMode(e), serviceList(st))
	<-st.Done()
	fmt.Fprintln(os.Stderr, "chainintel stopped")
	return st.Err()
}

func status(ctx context.Context, stateFile string) error {
	st, err := stack.ReadState(stateFile)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	all := stack.Collect(ctx, &http.Client{Timeout: 5 * time.Second}, st.Services)
	fmt.Printf("chainintel at %s (pid %d)\n\n", st.URL, st.PID)
	stack.Print(os.Stdout, all)
	var bad []string
	for _, s := range all {
		if !s.Healthy {
			bad = append(bad, s.Name)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("unhealthy: %s", strings.Join(bad, ", "))
	}
	return nil
}

// adminCommand is the edge admin command line for this stack. It names the stack's tier file
// (as an absolute path, so the line works from any directory) when one is set: without it the
// admin tool would know only the built-in tiers.
func adminCommand(st *stack.Stack, tiersFile string) string {
	var tiers string
	if tiersFile != "" {
		if abs, err := filepath.Abs(tiersFile); err == nil {
			tiersFile = abs
		}
		tiers = fmt.Sprintf("EDGE_TIERS_FILE='%s' ", tiersFile)
	}
	return fmt.Sprintf(`    EDGE_DATABASE_URL='%s' EDGE_REDIS_URL='%s' EDGE_KAFKA_BROKERS='%s' \
    %sEDGE_INTERNAL_SECRET=unused-by-admin-0123 go run ./services/edge/cmd/edge admin help`,
		st.DBURL, st.RedisURL, strings.Join(st.Brokers, ","), tiers)
}

func ingestMode(e env) string {
	if e.EVMRPCURL != "" {
		return fmt.Sprintf("indexing %s from EVM_RPC_URL, resuming where it stopped (the first time: from %s)", e.EVMChain, e.EVMStartBlock)
	}
	return fmt.Sprintf("simulating %.1f transactions/s (set EVM_RPC_URL to index a node instead)", e.SimRate)
}

func serviceList(st *stack.Stack) string {
	var parts []string
	for _, n := range []string{"edge", "transfers", "intelligence", "user-labels", "balances", "token-analytics", "stream-fanout", "ingest"} {
		ep := st.Services[n]
		parts = append(parts, fmt.Sprintf("\n  %-16s http %s  ops %s", n, ep.HTTP, ep.Ops))
	}
	return strings.Join(parts, "")
}
