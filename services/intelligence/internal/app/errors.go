package app

import (
	"errors"
	"fmt"
)

// The app's domain errors. internal/http alone maps them to statuses: ErrInvalidInput (an
// *InvalidInputError) is a 400, ErrNotFound (a *NotFoundError) a 404, ErrUnauthenticated a 401.
// Dependency outages stay httpx.Unavailable errors, which every service maps alike.
var (
	// ErrInvalidInput: a parameter or body field of the request is wrong.
	ErrInvalidInput = errors.New("invalid input")
	// ErrNotFound: what the request names is not known.
	ErrNotFound = errors.New("not found")
	// ErrUnauthenticated: the request needs a caller and has none.
	ErrUnauthenticated = errors.New("error validating API key")
)

// InvalidInputError names the parameter or body field that was wrong and why; its message is
// "<field>: <reason>".
type InvalidInputError struct {
	Field  string // e.g. "chain", "addresses[3]"
	Reason string
}

func (e *InvalidInputError) Error() string { return e.Field + ": " + e.Reason }

// Is makes errors.Is(err, ErrInvalidInput) true.
func (e *InvalidInputError) Is(target error) bool { return target == ErrInvalidInput }

func invalid(field, format string, args ...any) error {
	return &InvalidInputError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// NotFoundError says that what the request names is not known; its message is what the caller
// is told.
type NotFoundError struct {
	Kind    string // what was looked up: "address", "entity", "cluster", "contract", "token", "tag"
	Message string
}

func (e *NotFoundError) Error() string { return e.Message }

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

func notFound(kind, format string, args ...any) error {
	return &NotFoundError{Kind: kind, Message: fmt.Sprintf(format, args...)}
}
