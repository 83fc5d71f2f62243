// Package pgstore connects services to PostgreSQL: a pgx pool, database creation for the local
// stack, and the migration runner each service's `migrate` subcommand calls.
package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Options tune a pool.
type Options struct {
	MaxConns int32  // 0: pgx default (max(4, NumCPU))
	AppName  string // shown in pg_stat_activity
	// Tracer, when set, sees every statement (pgx.QueryTracer; also pgx.BatchTracer and
	// pgxpool.AcquireTracer when it implements them).
	Tracer pgx.QueryTracer
}

// Connect opens a pool and checks the server answers. When it does not, the error says how to
// fix it.
func Connect(ctx context.Context, url string, o Options) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database URL is not valid: %w", err)
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	if o.AppName != "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = o.AppName
	}
	if o.Tracer != nil {
		cfg.ConnConfig.Tracer = o.Tracer
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database pool: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, Unreachable(cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	return pool, nil
}

// Unreachable words a connection failure so an operator knows what to do.
func Unreachable(host string, port uint16, err error) error {
	var ne *net.OpError
	if errors.As(err, &ne) || strings.Contains(err.Error(), "connect") {
		cause := err
		if ne != nil && ne.Err != nil {
			cause = ne.Err // "connect: connection refused" rather than pgx's per-address list
		}
		return fmt.Errorf("PostgreSQL is not reachable at %s:%d (%v); start it (on Debian: "+
			"pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) or point "+
			"DATABASE_URL at a running server", host, port, cause)
	}
	return fmt.Errorf("PostgreSQL at %s:%d refused the connection: %w", host, port, err)
}

// EnsureDatabase creates the database named in url when it does not exist, connecting to the
// server's "postgres" database to do so.
func EnsureDatabase(ctx context.Context, url string) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("database URL is not valid: %w", err)
	}
	name := cfg.Database
	if name == "" {
		return errors.New("database URL names no database")
	}
	admin := cfg.Copy()
	admin.Database = "postgres"
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, admin)
	if err != nil {
		return Unreachable(cfg.Host, cfg.Port, err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("look up database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	if err != nil && !IsCode(err, "42P04") { // duplicate_database: created concurrently
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// Migrate applies the goose migrations in fsys (files at its root, e.g. "001_init.sql") to
// schema, creating the schema first. Its version table lives in the schema, and a Postgres
// advisory lock keyed by the schema makes concurrent runs wait for each other.
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema string, fsys fs.FS, log *slog.Logger) error {
	if _, err := pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return fmt.Errorf("create schema %s: %w", schema, err)
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte("chainintel-migrate:" + schema))
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64() >> 1)))
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithTableName(schema+".goose_db_version"),
		goose.WithSessionLocker(locker),
		goose.WithDisableGlobalRegistry(true),
	)
	if err != nil {
		return fmt.Errorf("migrations for %s: %w", schema, err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", schema, err)
	}
	if log != nil {
		for _, r := range results {
			log.Info("migration applied", "schema", schema, "version", r.Source.Version, "took", r.Duration)
		}
	}
	return nil
}

// OpenDB returns a database/sql handle over pool for libraries that need one.
func OpenDB(pool *pgxpool.Pool) *sql.DB { return stdlib.OpenDBFromPool(pool) }

// IsCode reports whether err is a PostgreSQL error with the given SQLSTATE code.
func IsCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// IsUniqueViolation reports whether err is a unique-constraint violation (23505).
func IsUniqueViolation(err error) bool { return IsCode(err, "23505") }

// IsForeignKeyViolation reports whether err is a foreign-key violation (23503).
func IsForeignKeyViolation(err error) bool { return IsCode(err, "23503") }
