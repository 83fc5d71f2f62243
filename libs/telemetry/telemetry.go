// Package telemetry sets up OpenTelemetry traces and metrics and the JSON logger for a service.
//
// Traces are always recorded (so logs carry trace ids and context propagates across HTTP and
// Kafka hops); they are exported over OTLP/HTTP only when an endpoint is configured. Metrics go to
// a Prometheus registry owned by the service (served on its ops port) and, when an OTLP endpoint
// is configured, also over OTLP. Each service owns its providers, so several services can run in
// one process (the local stack) without sharing metric registries.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// Config says where telemetry goes. The zero value records traces locally and exports nothing.
type Config struct {
	// OTLPEndpoint is an OTLP/HTTP endpoint such as "http://otel-collector:4318"; empty turns
	// export off.
	OTLPEndpoint string `env:"OTLP_ENDPOINT"`
	// SampleRatio is the share of new traces recorded (0..1); requests that arrive with a
	// sampled trace context are always recorded.
	SampleRatio float64 `env:"TRACE_SAMPLE_RATIO" envDefault:"1"`
}

// Validate refuses an endpoint that is not an http or https URL with a host. The exporters
// append /v1/traces and /v1/metrics to it; a bare "host:4317" (the OTLP/gRPC habit) parses with
// no host, and every export would then fail without a word in the logs.
func (c Config) Validate() error {
	if c.OTLPEndpoint == "" {
		return nil
	}
	u, err := url.Parse(c.OTLPEndpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("OTLP_ENDPOINT (OTEL_EXPORTER_OTLP_ENDPOINT in the local stack) %q: want an OTLP/HTTP base URL with an http or https scheme and a host, e.g. http://otel-collector:4318", c.OTLPEndpoint)
	}
	return nil
}

// Telemetry holds a service's providers. Use Shutdown to flush them.
type Telemetry struct {
	Service        string
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Propagator     propagation.TextMapPropagator
	// Registry is the service's Prometheus registry, served on its ops port.
	Registry *prometheus.Registry

	shutdown []func(context.Context) error
}

// Propagator is the W3C trace-context and baggage propagator every hop uses.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(
	propagation.TraceContext{}, propagation.Baggage{})

func init() {
	// The propagator is stateless and the same for every service; instrumentation libraries
	// (otelgin, otelhttp) read the global one.
	otel.SetTextMapPropagator(Propagator)
}

// Setup builds the providers for service.
func Setup(ctx context.Context, service string, cfg Config) (*Telemetry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	endpoint := strings.TrimSuffix(cfg.OTLPEndpoint, "/")
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(service))
	t := &Telemetry{Service: service, Propagator: Propagator, Registry: prometheus.NewRegistry()}
	t.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	// A ratio of 0 starts no new traces but still follows sampled parents (ParentBased), so a
	// trace the edge sampled is followed through every service. The edge follows a caller's
	// traceparent only from EDGE_TRACE_TRUSTED_PROXIES; from anyone else it starts its own trace.
	ratio := cfg.SampleRatio
	if ratio < 0 || ratio > 1 {
		ratio = 1
	}
	topts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))),
	}
	if cfg.OTLPEndpoint != "" {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint+"/v1/traces"))
		if err != nil {
			return nil, fmt.Errorf("otlp trace exporter: %w", err)
		}
		topts = append(topts, sdktrace.WithBatcher(exp))
	}
	tp := sdktrace.NewTracerProvider(topts...)
	t.TracerProvider = tp
	t.shutdown = append(t.shutdown, tp.Shutdown)

	promExp, err := otelprom.New(otelprom.WithRegisterer(t.Registry))
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	mopts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(promExp)}
	if cfg.OTLPEndpoint != "" {
		mexp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(endpoint+"/v1/metrics"))
		if err != nil {
			return nil, fmt.Errorf("otlp metric exporter: %w", err)
		}
		mopts = append(mopts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp, sdkmetric.WithInterval(15*time.Second))))
	}
	mp := sdkmetric.NewMeterProvider(mopts...)
	t.MeterProvider = mp
	t.shutdown = append(t.shutdown, mp.Shutdown)
	return t, nil
}

// Nop returns telemetry that records nothing, for tests that don't look at it.
func Nop(service string) *Telemetry {
	t, _ := Setup(context.Background(), service, Config{})
	return t
}

// Tracer returns the service's tracer.
func (t *Telemetry) Tracer() trace.Tracer { return t.TracerProvider.Tracer(t.Service) }

// Meter returns the service's meter.
func (t *Telemetry) Meter() metric.Meter { return t.MeterProvider.Meter(t.Service) }

// Shutdown flushes and stops the providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	for _, f := range t.shutdown {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}
