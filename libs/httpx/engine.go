package httpx

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/chainintel/chainintel/libs/params"
	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// MaxBodyBytes is the default request body limit (API.md: bodies over 1 MiB get 413).
const MaxBodyBytes = 1 << 20

// EngineOptions configure NewEngine.
type EngineOptions struct {
	Service        string
	Logger         *slog.Logger
	TracerProvider trace.TracerProvider // nil: no spans
	// MeterProvider records http_server_request_duration_seconds by route and status (nil:
	// none); it is set only with TracerProvider.
	MeterProvider metric.MeterProvider
	MaxBodyBytes  int64 // 0: MaxBodyBytes
}

func init() { gin.SetMode(gin.ReleaseMode) }

// NewEngine returns a gin engine with tracing, panic recovery, the body limit, JSON 404/405 and
// logging of 5xx causes.
func NewEngine(o EngineOptions) *gin.Engine {
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.ContextWithFallback = true // c.Done()/c.Value() follow the request context
	// Route on the path exactly as sent and never re-resolve it: an encoded "/" stays inside its
	// segment, dot segments and "//" are not collapsed, and no redirect points elsewhere, so a
	// service serves the very route the edge authorised for that path (docs/edge.md "Paths").
	// Path values are decoded by pathValues, not by gin, whose decoding turns "+" into a space.
	e.UseEscapedPath = true
	e.UnescapePathValues = false
	e.RemoveExtraSlash = false
	e.RedirectTrailingSlash = false
	e.Use(pathValues)
	if o.TracerProvider != nil {
		opts := []otelgin.Option{otelgin.WithTracerProvider(o.TracerProvider)}
		if o.MeterProvider != nil {
			opts = append(opts, otelgin.WithMeterProvider(o.MeterProvider))
		}
		e.Use(otelgin.Middleware(o.Service, opts...))
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	limit := o.MaxBodyBytes
	if limit <= 0 {
		limit = MaxBodyBytes
	}
	e.Use(recoverer(log), BodyLimit(limit), errorLogger(log), ValidText())
	e.NoRoute(func(c *gin.Context) { Error(c, http.StatusNotFound, "no route for "+c.Request.URL.Path) })
	e.NoMethod(func(c *gin.Context) {
		Error(c, http.StatusMethodNotAllowed, "method "+c.Request.Method+" not allowed on "+c.Request.URL.Path)
	})
	return e
}

// pathValues decodes the matched path parameters (percent-encoding only: "+" stays "+").
func pathValues(c *gin.Context) {
	for i, p := range c.Params {
		if v, err := url.PathUnescape(p.Value); err == nil {
			c.Params[i].Value = v
		}
	}
	c.Next()
}

func recoverer(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if err, ok := r.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(r)
				}
				log.ErrorContext(c.Request.Context(), "panic in handler", "panic", r, "path", c.FullPath())
				Error(c, http.StatusInternalServerError, "internal error")
			}
		}()
		c.Next()
	}
}

func errorLogger(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Next()
		if c.Writer.Status() >= 500 && len(c.Errors) > 0 {
			log.ErrorContext(c.Request.Context(), "request failed", "method", c.Request.Method,
				"route", c.FullPath(), "status", c.Writer.Status(), "error", c.Errors.String())
		}
	}
}

// ValidText refuses a request whose path parameters or query string hold text no store accepts
// (invalid UTF-8, a NUL character; params.Text), or whose query string has a pair
// url.Values would silently drop (a malformed percent-escape, a ";"; params.RawQuery), with a 400
// naming the parameter, before any handler sees it. Bodies are checked by DecodeJSON.
func ValidText() gin.HandlerFunc {
	return func(c *gin.Context) {
		for _, p := range c.Params {
			if err := params.Text(p.Key, p.Value); err != nil {
				Error(c, http.StatusBadRequest, err.Error())
				return
			}
		}
		if c.Request.URL.RawQuery != "" {
			if _, err := params.RawQuery(c.Request.URL.RawQuery); err != nil {
				Error(c, http.StatusBadRequest, err.Error())
				return
			}
		}
		c.Next()
	}
}

// BodyLimit rejects bodies over limit bytes with 413: at once when Content-Length says so,
// otherwise when a handler reads past the limit (ReadBody reports it).
func BodyLimit(limit int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > limit {
			Errorf(c, http.StatusRequestEntityTooLarge, "request body over %d bytes", limit)
			return
		}
		if c.Request.Body != nil {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
		}
		c.Next()
	}
}

// BindJSON decodes the body into v, rejecting unknown fields and trailing data. On failure it
// has already answered (413 over the limit, 400 otherwise) and returns false.
func BindJSON(c *gin.Context, v any) bool {
	if err := DecodeJSON(c.Request.Body, v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			Errorf(c, http.StatusRequestEntityTooLarge, "request body over %d bytes", tooBig.Limit)
			return false
		}
		Error(c, http.StatusBadRequest, err.Error())
		return false
	}
	return true
}

// IsInternalPath reports whether path is under /internal/, which the edge never routes.
func IsInternalPath(path string) bool {
	return path == "/internal" || strings.HasPrefix(path, "/internal/")
}
