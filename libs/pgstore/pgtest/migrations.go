package pgtest

import (
	"context"
	"io/fs"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"
)

// MigrationDB creates a scratch database (named after prefix) holding schema, empty, and returns
// a pool on it (maxConns connections) and a goose provider of the migrations in fsys, for tests
// that migrate step by step (UpTo a version, write that version's rows, then Up). Everything
// goes at the end of the test.
func MigrationDB(t testing.TB, prefix, schema string, fsys fs.FS, maxConns int32) (*pgxpool.Pool, *goose.Provider) {
	t.Helper()
	ctx := context.Background()
	url, drop, err := CreateDatabase(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	pool, err := pgstore.Connect(ctx, url, pgstore.Options{MaxConns: maxConns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	db := pgstore.OpenDB(pool)
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithTableName(schema+".goose_db_version"), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	return pool, p
}
