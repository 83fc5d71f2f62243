package promscrape

import (
	"reflect"
	"strings"
	"testing"
)

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (class) (rate(edge_requests_total{job="edge",status=~"5.."}[5m]))`:                                                            {"edge_requests_total"},
		`histogram_quantile(0.99, sum by (le, http_route) (rate(http_server_request_duration_seconds_bucket{job="$job"}[$__rate_interval])))`: {"http_server_request_duration_seconds_bucket"},
		`transfers_rollup_queue_rows / clamp_min(rate(transfers_rollups_applied_total[5m]), 1)`:                                               {"transfers_rollup_queue_rows", "transfers_rollups_applied_total"},
		`max by (topic) (eventbus_consumer_lag) > 0 and on (topic) ingest_head_lag_blocks offset 5m`:                                          {"eventbus_consumer_lag", "ingest_head_lag_blocks"},
	} {
		if got := MetricNames(expr); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v, want %v", expr, got, want)
		}
	}
}

func TestParseHistogramAndSelect(t *testing.T) {
	in := `# TYPE h histogram
h_bucket{route="a",le="0.5"} 1
h_bucket{route="a",le="+Inf"} 2
h_sum{route="a"} 1.5
h_count{route="a"} 2
# TYPE g gauge
g{chain="x"} 7
g{chain="y"} 8
`
	s, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	names := s.Names()
	for _, n := range []string{"h_bucket", "h_sum", "h_count", "g"} {
		if !names[n] {
			t.Errorf("%s missing from %v", n, names)
		}
	}
	if v, ok := s.Value("g", map[string]string{"chain": "y"}); !ok || v != 8 {
		t.Errorf("g{chain=y} = %v %v", v, ok)
	}
	if _, ok := s.Value("g", nil); ok {
		t.Error("two series answered as one")
	}
}

func TestLabelNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (class) (rate(edge_requests_total{job="edge",status=~"5.."}[5m]))`:                                   {"class", "job", "status"},
		`histogram_quantile(0.99, sum by (le, http_route) (rate(x_bucket{job="$job", a!="b,c"}[$__rate_interval])))`: {"le", "http_route", "job", "a"},
		`max(a) / clamp_min(sum(rate(b[5m])), 1)`:                                                                    nil,
		`max by (topic) (eventbus_consumer_lag) > 0 and on (topic, group) ingest_head_lag_blocks`:                    {"topic", "group"},
	} {
		if got := LabelNames(expr); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v, want %v", expr, got, want)
		}
	}
}
