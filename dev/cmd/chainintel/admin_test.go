package main

import (
	"path/filepath"
	"testing"

	"github.com/chainintel/chainintel/dev/stack"
)

// TestAdminCommandNamesTheTiersFile: the printed admin line carries the stack's tier file, as
// an absolute path, so `edge admin` run from it knows the custom tiers; without a file it names
// none.
func TestAdminCommandNamesTheTiersFile(t *testing.T) {
	st := &stack.Stack{DBURL: "postgres://db", RedisURL: "redis://r", Brokers: []string{"b1:9092", "b2:9092"}}
	abs, err := filepath.Abs("tiers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, want string
	}{
		{"none", "", "    EDGE_DATABASE_URL='postgres://db' EDGE_REDIS_URL='redis://r' EDGE_KAFKA_BROKERS='b1:9092,b2:9092' \\\n" +
			"    EDGE_INTERNAL_SECRET=unused-by-admin-0123 go run ./services/edge/cmd/edge admin help"},
		{"relative", "tiers.yaml", "    EDGE_DATABASE_URL='postgres://db' EDGE_REDIS_URL='redis://r' EDGE_KAFKA_BROKERS='b1:9092,b2:9092' \\\n" +
			"    EDGE_TIERS_FILE='" + abs + "' EDGE_INTERNAL_SECRET=unused-by-admin-0123 go run ./services/edge/cmd/edge admin help"},
		{"absolute", "/etc/tiers.yaml", "    EDGE_DATABASE_URL='postgres://db' EDGE_REDIS_URL='redis://r' EDGE_KAFKA_BROKERS='b1:9092,b2:9092' \\\n" +
			"    EDGE_TIERS_FILE='/etc/tiers.yaml' EDGE_INTERNAL_SECRET=unused-by-admin-0123 go run ./services/edge/cmd/edge admin help"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := adminCommand(st, tc.file); got != tc.want {
				t.Errorf("adminCommand(%q) =\n%s\nwant\n%s", tc.file, got, tc.want)
			}
		})
	}
}
