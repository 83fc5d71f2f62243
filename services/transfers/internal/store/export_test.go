package store

import "github.com/chainintel/chainintel/services/transfers/internal/store/write"

// Test-only access to the version 2 row layout (TestMigrationFromVersion2 writes it).

// TransferColumns are the transfer columns without the natural id.
func TransferColumns() []string { return write.TransferColumns() }

// TransferValues are a row's values for TransferColumns.
func TransferValues(r TransferRow) []any { return write.TransferValues(r) }
