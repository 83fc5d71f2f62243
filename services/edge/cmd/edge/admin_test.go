package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	libconfig "github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/edge"
	"github.com/chainintel/chainintel/services/edge/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

func TestAdminCommands(t *testing.T) {
	var cfg edge.Config
	if err := libconfig.Defaults(&cfg); err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL = pgtest.URL(t)
	// A Redis of the test's own: invalidations are published server-wide, and revoke and
	// set-tier fail when no edge hears them, so the test plays the listening edge.
	m := miniredis.RunT(t)
	cfg.Redis.URL = "redis://" + m.Addr() + "/0"
	ctx := context.Background()
	edgeListening(t, m.Addr())
	run := func(args ...string) []byte {
		t.Helper()
		var out bytes.Buffer
		if err := admin(ctx, cfg, args, &out); err != nil {
			t.Fatalf("edge admin %v: %v", args, err)
		}
		return out.Bytes()
	}
	var org edge.Org
	if err := json.Unmarshal(run("create-org", "--name", "Acme"), &org); err != nil || org.ID == "" || org.Name != "Acme" {
		t.Fatalf("create-org: %+v %v", org, err)
	}
	var user edge.User
	if err := json.Unmarshal(run("create-user", "--org", org.ID, "--email", "ops@acme.test", "--role", "org_admin"), &user); err != nil || user.OrgID != org.ID {
		t.Fatalf("create-user: %+v %v", user, err)
	}
	var created struct {
		Key string `json:"key"`
		edge.KeyInfo
	}
	if err := json.Unmarshal(run("create-key", "--user", user.ID, "--tier", "pro", "--name", "ci"), &created); err != nil ||
		!strings.HasPrefix(created.Key, created.Prefix) || created.Tier != "pro" || created.Name != "ci" {
		t.Fatalf("create-key: %+v %v", created, err)
	}
	var changed map[string]any
	if err := json.Unmarshal(run("set-tier", "--org", org.ID, "--tier", "api"), &changed); err != nil || changed["keysChanged"] != 1.0 {
		t.Fatalf("set-tier: %v %v", changed, err)
	}
	run("revoke", "--key", created.ID)
	var keys []edge.KeyInfo
	if err := json.Unmarshal(run("list", "keys", "--org", org.ID), &keys); err != nil || len(keys) != 1 || keys[0].Tier != "api" || keys[0].RevokedAt == nil {
		t.Fatalf("list keys: %+v %v", keys, err)
	}
	var ts []edge.Tier
	if err := json.Unmarshal(run("tiers"), &ts); err != nil || len(ts) != 4 {
		t.Fatalf("tiers: %+v %v", ts, err)
	}
	// Refusals name what is wrong.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"create-key", "--tier", "platinum"}, `tier "platinum" is not in the tier table`},
		{[]string{"create-user", "--email", "x@y.test", "--role", "boss"}, `role "boss"`},
		{[]string{"set-tier", "--tier", "api"}, "one of --key or --org"},
		{[]string{"list", "widgets"}, "list what?"},
		{[]string{"frobnicate"}, `unknown admin command "frobnicate"`},
	} {
		err := admin(ctx, cfg, c.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
