package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/gin-gonic/gin"
)

// ErrUnavailable is what every dependency outage matches (errors.Is): PostgreSQL unreachable,
// another service not answering or answering 5xx, Redis down. Such a failure is answered 503
// with Retry-After and the dependency's name, never as a 500 and never by leaving out what the
// dependency would have added.
var ErrUnavailable = errors.New("dependency unavailable")

// RetryAfterSeconds is the Retry-After of a 503 for a dependency outage: services reconnect on
// their own within about a second of the dependency coming back.
const RetryAfterSeconds = 1

// UnavailableError is a dependency outage: Dependency names it for the caller ("PostgreSQL",
// "user-labels", "Redis"); Err is the cause, logged and never shown.
type UnavailableError struct {
	Dependency string
	Err        error
}

func (e *UnavailableError) Error() string {
	if e.Err == nil {
		return e.Dependency + " is unavailable"
	}
	return e.Dependency + " is unavailable: " + e.Err.Error()
}

// Unwrap lets errors.Is match ErrUnavailable and the cause.
func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// Unavailable wraps err as an outage of dependency.
func Unavailable(dependency string, err error) error {
	return &UnavailableError{Dependency: dependency, Err: err}
}

// Classify returns the status, the caller's message, and whether a Retry-After goes with it,
// for any error a handler fails with. It is the one place errors become statuses:
//   - a *StatusError keeps its status and message;
//   - a dependency outage (an *UnavailableError, or a PostgreSQL connection failure however it
//     was wrapped) is 503 naming the dependency, with Retry-After;
//   - a request the caller cancelled is 499;
//   - anything else is a 500 whose details are logged, never shown.
func Classify(err error) (status int, msg string, retry bool) {
	var se *StatusError
	var ue *UnavailableError
	switch {
	case errors.As(err, &se):
		return se.Status, se.Message, false
	case errors.As(err, &ue):
		return http.StatusServiceUnavailable, ue.Dependency + " is unavailable; retry later", true
	case pgstore.IsUnavailable(err):
		return http.StatusServiceUnavailable, "PostgreSQL is unavailable; retry later", true
	case errors.Is(err, context.Canceled):
		return 499, "request cancelled", false
	default:
		return http.StatusInternalServerError, "internal error", false
	}
}

// WriteFailure answers err on a plain net/http handler the way Fail does on gin.
func WriteFailure(w http.ResponseWriter, err error) {
	status, msg, retry := Classify(err)
	if retry {
		w.Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds))
	}
	WriteError(w, status, msg)
}

// WriteError writes {"error": msg} with status on a plain net/http handler.
func WriteError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(ErrorBody{Error: msg})
}

func failGin(c *gin.Context, err error) {
	status, msg, retry := Classify(err)
	if status >= 500 {
		_ = c.Error(err)
	}
	if retry {
		c.Header("Retry-After", strconv.Itoa(RetryAfterSeconds))
	}
	Error(c, status, msg)
}
