package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/importer"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/chainintel/chainintel/services/intelligence/migrations"
)

// Migrations 15 and 16 remove the claims and tags earlier imports stored on the zero and burn addresses
// the way an import's relabel does: the attributions lose their entity and label and take new
// versions, which the outbox relay reads (AddressesSince) and publishes, and the change log
// records. A wallet of the same entity keeps its attribution and version.
func notWallet(chainType, addr string) bool {
	_, ok := importer.NotWallet(chainType, addr)
	return ok
}

func TestMigrationRemovesNotWallets(t *testing.T) {
	ctx := context.Background()
	pool, p := pgtest.MigrationDB(t, "intel_migrate15", migrations.Schema, migrations.FS, 4)
	if _, err := p.UpTo(ctx, 14); err != nil {
		t.Fatal(err)
	}
	const zero, dead, wallet = "0x0000000000000000000000000000000000000000", "0x000000000000000000000000000000000000dead", "0x5e227ad1969ea493b43f840cff78d08a6fc17796"
	const tronZero = "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb"
	migrated := map[string]bool{"evm:" + zero: true, "evm:" + dead: true, "tron:" + tronZero: true}
	for _, n := range address.NotWallets() {
		if !migrated[string(n.Type)+":"+n.Address] {
			t.Fatalf("%s %s: in address.NotWallets but no migration removes earlier claims on it", n.Type, n.Address)
		}
	}
	for k := range migrated {
		if ct, a, _ := strings.Cut(k, ":"); !notWallet(ct, a) {
			t.Fatalf("%s: not in importer.NotWallet, which the migrations must match", k)
		}
	}
	st := store.New(pool)
	tags := []importer.TagRef{{ID: "defi"}}
	// What an import of an earlier release stored; store.ApplyBatch takes batches as given.
	if _, err := st.ApplyBatch(ctx, importer.Batch{Source: "graphsense:defi-protocols-csh",
		Entities: []attribution.Entity{{ID: "maker", Name: "MakerDAO", Type: "lending"}},
		Tags:     []attribution.Tag{{ID: "defi", Label: "DeFi", Rank: 5}},
		Claims: []importer.Claim{
			{ChainType: "evm", Address: zero, EntityID: "maker", Label: "maker_FAUCET", Confidence: 0.9, Tags: tags},
			{ChainType: "evm", Address: dead, Label: "burn", Confidence: 0.9},
			{ChainType: "tron", Address: tronZero, EntityID: "maker", Label: "black hole", Confidence: 0.9, Tags: tags},
			{ChainType: "evm", Address: wallet, EntityID: "maker", Label: "maker_MULTICALL", Confidence: 0.9, Tags: tags},
		}}); err != nil {
		t.Fatal(err)
	}
	var before int64
	if err := pool.QueryRow(ctx, `SELECT version FROM intel.addresses WHERE address = $1`, wallet).Scan(&before); err != nil {
		t.Fatal(err)
	}
	got := changedByMigration(t, pool, p, 16, func(a attribution.Address) string {
		return fmt.Sprintf("%s entity=%q label=%q source=%q", a.Address, a.EntityID, a.Label, a.Source)
	})
	want := fmt.Sprintf("[%s entity=\"\" label=\"\" source=\"\" %s entity=\"\" label=\"\" source=\"\" %s entity=\"\" label=\"\" source=\"\"]", zero, dead, tronZero)
	if fmt.Sprint(got) != want {
		t.Errorf("attributions changed by the migration: %v\nwant %s", got, want)
	}
	var claims, addrTags, logged int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM intel.claims WHERE address IN ($1, $2, $3)),
		(SELECT count(*) FROM intel.address_tags WHERE address IN ($1, $2, $3)),
		(SELECT count(*) FROM intel.change_log WHERE kind = 'address' AND key2 IN ($1, $2, $3) AND status = 'updated')`, zero, dead, tronZero).Scan(&claims, &addrTags, &logged); err != nil {
		t.Fatal(err)
	}
	if claims != 0 || addrTags != 0 || logged != 3 {
		t.Errorf("claims %d, address tags %d left; change log entries %d, want 0, 0, 3", claims, addrTags, logged)
	}
	var entity string
	var version int64
	if err := pool.QueryRow(ctx, `SELECT entity_id, version FROM intel.addresses WHERE address = $1`, wallet).Scan(&entity, &version); err != nil || entity != "maker" || version != before {
		t.Errorf("wallet: entity %q version %d (before %d), %v: want maker, unchanged", entity, version, before, err)
	}
}
