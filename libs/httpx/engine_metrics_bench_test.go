package httpx

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The cost of the request-duration metric on a service's engine: the same traced engine
// without and with a meter provider.
func BenchmarkEngineMetrics(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	for _, c := range []struct {
		name string
		o    EngineOptions
	}{
		{"traced", EngineOptions{Service: "bench", Logger: slog.New(slog.DiscardHandler), TracerProvider: tp}},
		{"traced+metrics", EngineOptions{Service: "bench", Logger: slog.New(slog.DiscardHandler), TracerProvider: tp, MeterProvider: mp}},
	} {
		e := NewEngine(c.o)
		e.GET("/transfers/:id", func(c *gin.Context) { c.Status(http.StatusNoContent) })
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/transfers/abc", nil)
			b.ReportAllocs()
			for b.Loop() {
				e.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
