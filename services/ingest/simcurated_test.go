package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/services/ingest"
	"github.com/chainintel/chainintel/sim"
)

// TestSimCuratedIsTheRunningWorlds: `ingest sim-curated` prints the curated.json of the world an
// ingester with the same configuration simulates, whenever that ingester started (the kind
// walkthrough pipes it into `intelligence import curated -`, as the local stack imports it).
func TestSimCuratedIsTheRunningWorlds(t *testing.T) {
	var cfg ingest.Config
	if err := config.Defaults(&cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Chains = []string{"ethereum", "bitcoin"}
	var got bytes.Buffer
	if err := ingest.WriteSimCurated(&got, cfg); err != nil {
		t.Fatal(err)
	}
	started, err := sim.New(ingest.SimConfig(cfg, time.Now().Add(-50*time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), started.Curated()) {
		t.Fatalf("sim-curated differs from the curated data of the world started earlier:\n%s\nwant\n%s", got.Bytes(), started.Curated())
	}
	var doc struct {
		Entities  []json.RawMessage `json:"entities"`
		Addresses []json.RawMessage `json:"addresses"`
	}
	if err := json.Unmarshal(got.Bytes(), &doc); err != nil || len(doc.Entities) == 0 || len(doc.Addresses) == 0 {
		t.Fatalf("not a curated file with entities and addresses (%v):\n%s", err, got.Bytes())
	}
	if err := ingest.Commands["sim-curated"](context.Background(), cfg, nil, []string{"extra"}); err == nil {
		t.Fatal("sim-curated accepted an argument")
	}
}
