// Package pgtest gives each test package a fresh PostgreSQL database, migrated, and drops it
// when the package's tests end.
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, migrate)) }
//	func TestX(t *testing.T) { pool := pgtest.Pool(t) ... }
//
// The server comes from CHAININTEL_TEST_DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/postgres). Tests fail, not skip, when it is unreachable:
// they are integration tests and a missing database is a broken setup.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ServerURL is the server tests create their databases on.
func ServerURL() string {
	if u := os.Getenv("CHAININTEL_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres"
}

var (
	mu      sync.Mutex
	dbURL   string
	pool    *pgxpool.Pool
	initErr error
)

// StatementTimeout is how long a statement of a package's tests may run (Main's database).
const StatementTimeout = "5min"

// Main creates the package's database, runs migrate on it, runs the tests and drops the
// database. Use it from TestMain; its result is the exit code.
func Main(m *testing.M, migrate func(ctx context.Context, pool *pgxpool.Pool) error) int {
	ctx := context.Background()
	url, drop, err := CreateDatabase(ctx, packageName())
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		return 1
	}
	defer drop()
	p, err := pgstore.Connect(ctx, url, pgstore.Options{MaxConns: 16, AppName: "pgtest"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		return 1
	}
	// A statement a test leaves running (a query a broken build never finishes, its test binary
	// killed by go test's timeout before the database is dropped) would hold a core of the
	// server for as long as it runs: the package's sessions stop any statement after a while.
	if _, err := p.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{p.Config().ConnConfig.Database}.Sanitize()+
		" SET statement_timeout = '"+StatementTimeout+"'"); err != nil {
		p.Close()
		fmt.Fprintln(os.Stderr, "pgtest: statement timeout:", err)
		return 1
	}
	p.Reset() // the connections open so far were made before the setting
	if migrate != nil {
		if err := migrate(ctx, p); err != nil {
			p.Close()
			fmt.Fprintln(os.Stderr, "pgtest: migrate:", err)
			return 1
		}
	}
	mu.Lock()
	dbURL, pool = url, p
	mu.Unlock()
	code := m.Run()
	p.Close()
	return code
}

// Pool returns the package database's pool (Main must have run).
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if pool == nil {
		t.Fatal("pgtest: no database; call pgtest.Main from TestMain")
	}
	return pool
}

// URL returns the package database's URL (Main must have run).
func URL(t testing.TB) string {
	t.Helper()
	Pool(t)
	return dbURL
}

var unsafe = regexp.MustCompile(`[^a-z0-9_]+`)

// CreateDatabase creates an empty database named after prefix with a random suffix and returns
// its URL and a function that drops it.
func CreateDatabase(ctx context.Context, prefix string) (string, func(), error) {
	server := ServerURL()
	cfg, err := pgx.ParseConfig(server)
	if err != nil {
		return "", nil, fmt.Errorf("CHAININTEL_TEST_DATABASE_URL: %w", err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "citest_" + unsafe.ReplaceAllString(strings.ToLower(prefix), "_")
	if len(name) > 40 {
		name = name[:40]
	}
	name += "_" + hex.EncodeToString(b[:])
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, cfg)
	if err != nil {
		return "", nil, pgstore.Unreachable(cfg.Host, cfg.Port, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("create test database: %w", err)
	}
	dbCfg := cfg.Copy()
	dbCfg.Database = name
	url := withDatabase(server, name)
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.ConnectConfig(dctx, cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: drop:", err)
			return
		}
		defer c.Close(dctx)
		if _, err := c.Exec(dctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: drop:", err)
		}
	}
	return url, drop, nil
}

// withDatabase replaces the database in a postgres URL.
func withDatabase(server, name string) string {
	base, query, _ := strings.Cut(server, "?")
	i := strings.LastIndex(base, "/")
	if i > len("postgres://") {
		base = base[:i]
	}
	u := base + "/" + name
	if query != "" {
		u += "?" + query
	}
	return u
}

func packageName() string {
	wd, err := os.Getwd()
	if err != nil {
		return "pkg"
	}
	return filepath.Base(filepath.Dir(wd)) + "_" + filepath.Base(wd)
}
