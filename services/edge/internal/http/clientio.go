package http

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/chainintel/chainintel/services/edge/internal/proxy"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
)

// ReadBody reads a call's request body whole, within timeout, before the middlewares after it
// run: placed after authentication and the rate limits and before the metering and the
// Shedder, it keeps a client that sends its body slowly (or never finishes it) from holding
// an upstream's in-flight slot or a credit reservation while it dawdles; such a client gets a
// 408 when timeout passes, and its connection is closed. A GET's body is read and dropped
// (no route reads one), so it holds no memory either. WebSocket routes are left alone.
func ReadBody(timeout time.Duration) Middleware {
	return func(rt routes.Route, next http.Handler) http.Handler {
		if rt.WebSocket {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
				next.ServeHTTP(w, r)
				return
			}
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Now().Add(timeout)) // unsupported (a test's recorder): no bound
			var err error
			if r.Method == http.MethodGet {
				_, err = io.Copy(io.Discard, r.Body)
				_ = r.Body.Close()
				r.Body, r.ContentLength, r.TransferEncoding = http.NoBody, 0, nil
			} else {
				_, err = bufferBody(r)
			}
			// The server's own deadline would otherwise end the connection's background read,
			// which cancels the call's context, while the upstream is still answering.
			_ = rc.SetReadDeadline(time.Time{})
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					w.Header().Set("Connection", "close")
					proxy.WriteError(w, http.StatusRequestTimeout, "request body not received within "+timeout.String())
					return
				}
				writeBodyError(w, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// writeDeadlines bounds each write of an answer by idle: the deadline front set as the call
// arrived is moved on by every write and flush, so a client reading slowly but steadily gets
// an answer of any size, and one that stops reading is cut off idle after its last progress
// (its call returns and frees its upstream slot). A WebSocket route's connection gets no
// deadline: its stream is long-lived and the stream proxy bounds its own writes.
func writeDeadlines(rt routes.Route, idle time.Duration, next http.Handler) http.Handler {
	if idle <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if rt.WebSocket {
			// A keep-alive connection may carry an earlier call's deadline into the upgrade.
			_ = rc.SetWriteDeadline(time.Time{})
			next.ServeHTTP(w, r)
			return
		}
		// The first deadline was set as the call arrived (front); each write moves it on.
		next.ServeHTTP(&idleWriter{ResponseWriter: w, rc: rc, idle: idle}, r)
	})
}

// idleWriter moves the connection's write deadline on before each write and flush.
type idleWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	idle time.Duration
}

func (w *idleWriter) Write(b []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.idle))
	return w.ResponseWriter.Write(b)
}

func (w *idleWriter) Flush() {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.idle))
	_ = w.rc.Flush()
}

func (w *idleWriter) FlushError() error {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.idle))
	return w.rc.Flush()
}

func (w *idleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
