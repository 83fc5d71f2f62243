package telemetry

import (
	"context"
	"strings"
	"testing"
)

func TestConfigValidateEndpoint(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		ok       bool
	}{
		{"", true},
		{"http://otel-collector:4318", true},
		{"https://otel.example.com", true},
		{"http://otel-collector:4318/", true},
		// The OTLP/gRPC habit: no scheme, so url.Parse takes the host for a scheme.
		{"otel-collector:4317", false},
		{"otel-collector.observability:4317", false},
		{"otel-collector", false},
		{"grpc://otel-collector:4317", false},
		{"http://", false},
		{"http:///v1", false},
	} {
		err := Config{OTLPEndpoint: tc.endpoint}.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("Validate(%q) = %v, want ok=%v", tc.endpoint, err, tc.ok)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_ENDPOINT") {
			t.Errorf("Validate(%q) = %v, want the error to name OTEL_EXPORTER_OTLP_ENDPOINT", tc.endpoint, err)
		}
	}
}

func TestSetupRefusesEndpointWithoutScheme(t *testing.T) {
	if _, err := Setup(context.Background(), "test", Config{OTLPEndpoint: "otel-collector:4317", SampleRatio: 1}); err == nil {
		t.Fatal("Setup accepted otel-collector:4317; want an error")
	}
	tel, err := Setup(context.Background(), "test", Config{OTLPEndpoint: "http://127.0.0.1:1", SampleRatio: 1})
	if err != nil {
		t.Fatalf("Setup(http://127.0.0.1:1): %v", err)
	}
	// The collector is unreachable and the exporters retry; a cancelled context makes the
	// final flush give up at once. Its error is not what this test is about.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = tel.Shutdown(ctx)
}
