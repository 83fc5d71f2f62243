// Package migrations holds the ingest schema's SQL migrations, embedded in the binary.
package migrations

import "embed"

// FS holds the migration files.
//
//go:embed *.sql
var FS embed.FS

// Schema is the PostgreSQL schema the ingest service owns.
const Schema = "ingest"
