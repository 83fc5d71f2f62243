// Package client is what other services rely on of the transfers service's public API. The edge
// reserves credits for a per-row call before forwarding it, bounded by the rows the call can
// answer, which these bounds give; transfers' own query parser uses them, so the two cannot
// drift.
package client

// Page bounds of the list routes (GET /transfers, /swaps and /transfers/unenriched): the rows
// a call asks for with ?limit=, DefaultLimit when absent, at most MaxLimit.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)
