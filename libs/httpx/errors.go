// Package httpx is the HTTP glue every chainintel service shares: the gin engine with the one
// error shape {"error": ...}, body limits, 404/405 handling and tracing; the signed caller
// identity the edge passes to services; HTTP and ops servers as lifecycle parts; and an
// internal HTTP client that carries trace context and identity.
package httpx

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
)

// ErrorBody is the shape of every error response.
type ErrorBody struct {
	Error string `json:"error"`
}

// Error aborts the request with status and {"error": msg}.
func Error(c *gin.Context, status int, msg string) {
	c.AbortWithStatusJSON(status, ErrorBody{Error: msg})
}

// Errorf is Error with a format.
func Errorf(c *gin.Context, status int, format string, args ...any) {
	Error(c, status, fmt.Sprintf(format, args...))
}

// StatusError is an error that carries the HTTP status and the message a caller may see.
// App code returns it for anything the caller did wrong; handlers pass it to Fail.
type StatusError struct {
	Status  int
	Message string
}

func (e *StatusError) Error() string { return e.Message }

// BadRequest returns a 400 StatusError.
func BadRequest(format string, args ...any) error {
	return &StatusError{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...)}
}

// NotFound returns a 404 StatusError.
func NotFound(format string, args ...any) error {
	return &StatusError{Status: http.StatusNotFound, Message: fmt.Sprintf(format, args...)}
}

// Forbidden returns a 403 StatusError.
func Forbidden(format string, args ...any) error {
	return &StatusError{Status: http.StatusForbidden, Message: fmt.Sprintf(format, args...)}
}

// Fail maps err to a response through Classify: a StatusError keeps its status and message; a
// dependency outage is a 503 with Retry-After naming the dependency; anything else is a 500
// whose details are logged, never shown.
func Fail(c *gin.Context, err error) { failGin(c, err) }
