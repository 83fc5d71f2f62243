// Package migrations holds the balances schema's SQL migrations, embedded in the binary.
package migrations

import "embed"

// FS holds the migration files.
//
//go:embed *.sql
var FS embed.FS

// Schema is the PostgreSQL schema the balances service owns.
const Schema = "balances"
