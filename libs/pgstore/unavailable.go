package pgstore

import (
	"errors"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
)

// IsUnavailable reports whether err means PostgreSQL could not be reached or dropped the
// connection (as opposed to refusing a statement): a failed dial, a connection closed under a
// query, a closed pool, or a server that is shutting down or starting. Such a failure says
// nothing about the request, so callers answer it as a dependency outage, never as a bug.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	if errors.Is(err, puddle.ErrClosedPool) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08: connection exception; 57P01-57P03: admin/crash shutdown, cannot connect now.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	// pgconn reports a connection lost mid-statement as an unexpected EOF or "conn closed";
	// SafeToRetry marks errors that happened before anything reached the server.
	if pgconn.SafeToRetry(err) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "unexpected EOF") ||
		strings.Contains(msg, "connection reset by peer") || strings.Contains(msg, "broken pipe")
}
