package config

import (
	"testing"

	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// The configuration's defaults of the store's settings are the store's own (store.DefaultOptions),
// queued rollups among them.
func TestStoreDefaults(t *testing.T) {
	var c Config
	if err := config.Defaults(&c); err != nil {
		t.Fatal(err)
	}
	got, want := c.StoreOptions(), store.DefaultOptions()
	if got.GroupMin != want.GroupMin || got.AttributionCache != want.AttributionCache || got.InlineRollups != want.InlineRollups ||
		got.RollupLagMax != want.RollupLagMax {
		t.Fatalf("configuration's store defaults %+v, store's %+v", got, want)
	}
}
