// Package migrations holds the intel schema's SQL migrations, embedded in the binary.
package migrations

import "embed"

// FS holds the migration files.
//
//go:embed *.sql
var FS embed.FS

// Schema is the PostgreSQL schema the intelligence service owns.
const Schema = "intel"
