package charts

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// serviceNames are the eight deployables; each has a chart of the same name.
var serviceNames = []string{"edge", "ingest", "transfers", "intelligence", "user-labels", "balances", "token-analytics", "stream-fanout"}

// serviceFacts is what the charts must agree with, read from the service's own source so a
// change in the code that the charts do not follow fails here.
type serviceFacts struct {
	Name     string
	Prefix   string // environment prefix, e.g. "EDGE_"
	Postgres bool   // embeds service.Postgres: needs <PREFIX>DATABASE_URL
	Kafka    bool   // embeds service.Kafka: needs <PREFIX>KAFKA_BROKERS
	Redis    bool   // embeds service.Redis: needs <PREFIX>REDIS_URL
	Schema   bool   // has SQL migrations
	// Upstreams maps the edge's upstream variables (EDGE_UPSTREAM_TRANSFERS, ...) to the
	// service each one names.
	Upstreams map[string]string
	// Vars are the variables the service reads, with its prefix: its config's env tags and the
	// shared ones of libs/service and libs/telemetry.
	Vars map[string]bool
}

var (
	factsOnce sync.Once
	factsAll  map[string]serviceFacts
	factsErr  error
)

// facts reads every service's facts once.
func facts(t *testing.T) map[string]serviceFacts {
	t.Helper()
	factsOnce.Do(func() { factsAll, factsErr = readAllFacts() })
	if factsErr != nil {
		t.Fatal(factsErr)
	}
	return factsAll
}

var (
	prefixRe   = regexp.MustCompile(`const Prefix = "([A-Z]+_)"`)
	embedRe    = regexp.MustCompile(`(?m)^\s*service\.(Postgres|Kafka|Redis)\s*$`)
	upstreamRe = regexp.MustCompile(`env:"(UPSTREAM_[A-Z_]+)"`)
	envTagRe   = regexp.MustCompile(`env:"([A-Z0-9_]+)[",]`)
)

// sharedVarFiles declare the configuration every service embeds (Base, Postgres, Kafka, Redis,
// telemetry).
var sharedVarFiles = []string{"../libs/service/service.go", "../libs/service/kafka.go", "../libs/telemetry/telemetry.go"}

func readAllFacts() (map[string]serviceFacts, error) {
	all := map[string]serviceFacts{}
	for _, name := range serviceNames {
		f, err := readFacts(name)
		if err != nil {
			return nil, err
		}
		all[name] = f
	}
	return all, nil
}

func readFacts(name string) (serviceFacts, error) {
	dir := filepath.Join("..", "services", name)
	src, err := os.ReadFile(filepath.Join(dir, "internal", "config", "config.go"))
	if err != nil {
		return serviceFacts{}, err
	}
	f := serviceFacts{Name: name, Upstreams: map[string]string{}, Vars: map[string]bool{}}
	m := prefixRe.FindSubmatch(src)
	if m == nil {
		return f, fmt.Errorf("%s: no `const Prefix = \"...\"` in internal/config/config.go", name)
	}
	f.Prefix = string(m[1])
	for _, e := range embedRe.FindAllSubmatch(src, -1) {
		switch string(e[1]) {
		case "Postgres":
			f.Postgres = true
		case "Kafka":
			f.Kafka = true
		case "Redis":
			f.Redis = true
		}
	}
	for _, u := range upstreamRe.FindAllSubmatch(src, -1) {
		v := string(u[1])
		if v == "UPSTREAM_TIMEOUT" {
			continue
		}
		svc := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(v, "UPSTREAM_"), "_", "-"))
		f.Upstreams[f.Prefix+v] = svc
	}
	sources := [][]byte{src}
	for _, p := range sharedVarFiles {
		b, err := os.ReadFile(p)
		if err != nil {
			return f, err
		}
		sources = append(sources, b)
	}
	for _, b := range sources {
		for _, m := range envTagRe.FindAllSubmatch(b, -1) {
			f.Vars[f.Prefix+string(m[1])] = true
		}
	}
	sqls, err := filepath.Glob(filepath.Join(dir, "migrations", "*.sql"))
	if err != nil {
		return f, err
	}
	f.Schema = len(sqls) > 0
	return f, nil
}

// Migrates reports whether the service gets a migrate Job: `<svc> migrate` migrates its schema
// and creates the Kafka topics it produces or consumes.
func (f serviceFacts) Migrates() bool { return f.Schema || f.Kafka }

// migrators lists the services that get a migrate Job, sorted.
func migrators(all map[string]serviceFacts) []string {
	var out []string
	for n, f := range all {
		if f.Migrates() {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// TestFactsMatchTheBrief pins what the charts were designed for, so a surprise in the sources
// (a new dependency, a service that gained or lost a schema) is looked at, not absorbed.
func TestFactsMatchTheBrief(t *testing.T) {
	all := facts(t)
	want := map[string]serviceFacts{
		"edge":            {Prefix: "EDGE_", Postgres: true, Kafka: true, Redis: true, Schema: true},
		"ingest":          {Prefix: "INGEST_", Postgres: true, Kafka: true, Schema: true},
		"transfers":       {Prefix: "TRANSFERS_", Postgres: true, Kafka: true, Schema: true},
		"intelligence":    {Prefix: "INTEL_", Postgres: true, Kafka: true, Schema: true},
		"user-labels":     {Prefix: "USERLABELS_", Postgres: true, Kafka: true, Schema: true},
		"balances":        {Prefix: "BALANCES_", Postgres: true, Kafka: true, Schema: true},
		"token-analytics": {Prefix: "TOKENANALYTICS_", Postgres: true, Kafka: true, Schema: true},
		"stream-fanout":   {Prefix: "STREAM_", Kafka: true, Redis: true},
	}
	for name, w := range want {
		g := all[name]
		if g.Prefix != w.Prefix || g.Postgres != w.Postgres || g.Kafka != w.Kafka || g.Redis != w.Redis || g.Schema != w.Schema {
			t.Errorf("%s: facts from source %+v, charts were built for %+v", name, g, w)
		}
	}
	ups := all["edge"].Upstreams
	if len(ups) != 6 {
		t.Errorf("edge upstream variables %v, want six", ups)
	}
	for v, svc := range ups {
		if _, ok := all[svc]; !ok || svc == "edge" || svc == "ingest" {
			t.Errorf("edge variable %s names %q, not a service behind the edge", v, svc)
		}
	}
}
