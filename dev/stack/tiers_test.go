package stack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/service"
)

// The edge and stream-fanout get the same tier table file: a file that is not a table is refused
// by both (each validates its own setting), and a good one by neither.
func TestTiersFileReachesEdgeAndStreamFanout(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	units := func(tiersFile string) error {
		p := platform{o: Options{TiersFile: tiersFile}.withDefaults(),
			base:  service.Base{LogLevel: "warn", ShutdownTimeout: time.Second, InternalSecret: randomKey()},
			pg:    service.Postgres{DatabaseURL: "postgres://postgres@127.0.0.1:5432/chainintel", MaxConns: 8},
			kafka: service.Kafka{Brokers: []string{"127.0.0.1:9092"}, Partitions: 1, ReplicationFactor: 1},
			rds:   service.Redis{URL: "redis://127.0.0.1:6379/0"},
			url:   func(string) string { return "http://127.0.0.1:1" },
		}
		_, err := buildUnits(p)
		return err
	}

	err := units(write("empty.yaml", "[]"))
	for _, want := range []string{"edge config", "EDGE_TIERS_FILE", "stream-fanout config", "STREAM_TIERS_FILE"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("an empty tier table: %v; want it to name %s", err, want)
		}
	}
	good := write("tiers.yaml", "- {name: gold, rate: 5, burst: 5, heavyRate: 1, streamHourly: 10, streamMonthly: 100}\n")
	if err := units(good); err != nil {
		t.Errorf("a good tier table: %v", err)
	}
}
