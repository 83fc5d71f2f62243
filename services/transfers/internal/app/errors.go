package app

import (
	"errors"
	"fmt"
)

// The app's domain errors. internal/http alone maps them to statuses: ErrInvalidInput (an
// *InvalidInputError) is a 400, ErrNotFound (a *NotFoundError) a 404. Dependency outages stay
// httpx.Unavailable errors, which every service maps alike.
var (
	// ErrInvalidInput: a parameter or body field of the request is wrong.
	ErrInvalidInput = errors.New("invalid input")
	// ErrNotFound: what the request names is not known.
	ErrNotFound = errors.New("not found")
)

// InvalidInputError names the parameter or body field that was wrong and why; its message is
// "<field>: <reason>".
type InvalidInputError struct {
	Field  string // e.g. "addresses[3].chainType"
	Reason string
}

func (e *InvalidInputError) Error() string { return e.Field + ": " + e.Reason }

// Is makes errors.Is(err, ErrInvalidInput) true.
func (e *InvalidInputError) Is(target error) bool { return target == ErrInvalidInput }

// invalidAt is the error of field of the i-th element of list, e.g. addresses[3].chainType.
func invalidAt(list string, i int, field string, err error) error {
	return &InvalidInputError{Field: fmt.Sprintf("%s[%d].%s", list, i, field), Reason: err.Error()}
}

// NotFoundError says that what the request names is not known; its message is what the caller
// is told.
type NotFoundError struct {
	Kind    string // what was looked up: "entity", "transaction"
	Message string
}

func (e *NotFoundError) Error() string { return e.Message }

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

func notFound(kind, format string, args ...any) error {
	return &NotFoundError{Kind: kind, Message: fmt.Sprintf(format, args...)}
}
