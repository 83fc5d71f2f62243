package tiers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/services/edge/tiers"
)

func TestDefaultTable(t *testing.T) {
	d := tiers.Default()
	if got := strings.Join(d.Names(), ","); got != "api,basic,free,pro" {
		t.Fatalf("names %s", got)
	}
	api, _ := d.Get("api")
	basic, _ := d.Get("basic")
	if !api.API || basic.API || api.Rate != 20 || api.HeavyRate != 1 || basic.Overage || api.StreamHourly != 10_000 || api.StreamMonthly != 1_000_000 {
		t.Fatalf("api %+v basic %+v", api, basic)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tb, err := tiers.Load(write("list.yaml", "- {name: gold, rate: 50, burst: 80, heavyRate: 2, api: true, includedCredits: 5, overage: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := tb.Get("gold"); !ok || g.Rate != 50 || g.Burst != 80 || g.HeavyRate != 2 || !g.API || g.IncludedCredits != 5 || !g.Overage {
		t.Fatalf("gold %+v", g)
	}
	if _, err := tiers.Load(write("doc.json", `{"tiers": [{"name": "x", "rate": 1, "burst": 1, "heavyRate": 1}]}`)); err != nil {
		t.Fatalf("json document: %v", err)
	}
	_, err = tiers.Load(write("bad.yaml", "- {name: Bad Name, rate: 0, burst: 1, heavyRate: 1}\n- {name: ok, rate: 1, burst: 1, heavyRate: 1, includedCredits: -1}\n- {name: ok, rate: 1, burst: 1, heavyRate: 1}\n"))
	for _, want := range []string{"name must match", "rate, burst and heavyRate must be positive", "must not be negative", "duplicate name"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad table: %v, want it to mention %q", err, want)
		}
	}
	if _, err := tiers.Load(write("empty.yaml", "[]")); err == nil {
		t.Error("empty table accepted")
	}
	if _, err := tiers.Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("missing file accepted")
	}
}
