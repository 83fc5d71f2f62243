// Package promscrape reads a service's /metrics (the Prometheus text format) into samples, for
// `chainintel status`, the dashboards' metric check and tests that watch a metric move.
package promscrape

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sample is one series' value. Histograms give their _bucket (with le), _sum and _count
// series, as the text format spells them.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Samples are a scrape's series.
type Samples []Sample

// Parse reads the text format.
func Parse(r io.Reader) (Samples, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	var out Samples
	for _, n := range names {
		f := fams[n]
		for _, m := range f.GetMetric() {
			out = append(out, samplesOf(n, f.GetType(), m)...)
		}
	}
	return out, nil
}

func samplesOf(name string, typ dto.MetricType, m *dto.Metric) []Sample {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	with := func(k, v string) map[string]string {
		c := make(map[string]string, len(labels)+1)
		for a, b := range labels {
			c[a] = b
		}
		c[k] = v
		return c
	}
	switch typ {
	case dto.MetricType_COUNTER:
		return []Sample{{name, labels, m.GetCounter().GetValue()}}
	case dto.MetricType_GAUGE:
		return []Sample{{name, labels, m.GetGauge().GetValue()}}
	case dto.MetricType_HISTOGRAM:
		h := m.GetHistogram()
		out := []Sample{{name + "_sum", labels, h.GetSampleSum()}, {name + "_count", labels, float64(h.GetSampleCount())}}
		for _, b := range h.GetBucket() {
			out = append(out, Sample{name + "_bucket", with("le", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)), float64(b.GetCumulativeCount())})
		}
		return append(out, Sample{name + "_bucket", with("le", "+Inf"), float64(h.GetSampleCount())})
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		return []Sample{{name + "_sum", labels, s.GetSampleSum()}, {name + "_count", labels, float64(s.GetSampleCount())}}
	default:
		return []Sample{{name, labels, m.GetUntyped().GetValue()}}
	}
}

// Scrape fetches and parses url (a service's ops port /metrics).
func Scrape(ctx context.Context, c *http.Client, url string) (Samples, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return Parse(io.LimitReader(resp.Body, 64<<20))
}

// Names is the set of series names present.
func (s Samples) Names() map[string]bool {
	out := map[string]bool{}
	for _, x := range s {
		out[x.Name] = true
	}
	return out
}

// Select returns the samples named name whose labels include match.
func (s Samples) Select(name string, match map[string]string) Samples {
	var out Samples
next:
	for _, x := range s {
		if x.Name != name {
			continue
		}
		for k, v := range match {
			if x.Labels[k] != v {
				continue next
			}
		}
		out = append(out, x)
	}
	return out
}

// Value returns the one sample named name whose labels include match.
func (s Samples) Value(name string, match map[string]string) (float64, bool) {
	sel := s.Select(name, match)
	if len(sel) != 1 {
		return 0, false
	}
	return sel[0].Value, true
}

// promqlWords are PromQL's functions, aggregations and keywords: never metric names.
var promqlWords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
	"sum": true, "min": true, "max": true, "avg": true, "count": true, "stddev": true, "stdvar": true,
	"topk": true, "bottomk": true, "quantile": true, "count_values": true, "group": true,
}

// MetricNames lists the metric names a PromQL expression reads: identifiers that are not
// function calls, keywords, label names inside {...} or by/without (...) lists, or strings.
func MetricNames(expr string) []string {
	var out []string
	seen := map[string]bool{}
	skipList := false // inside by (...) / without (...)
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '{':
			i = skipTo(expr, i, '}')
		case c == '"' || c == '\'' || c == '`':
			i = skipTo(expr, i, c)
		case c == '[':
			i = skipTo(expr, i, ']')
		case c == ')':
			skipList = false
			i++
		case c >= '0' && c <= '9': // a number or a duration such as 5m
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '.') {
				i++
			}
		case isIdentStart(c):
			var word string
			var call bool
			word, call, i = identAt(expr, i)
			switch {
			case groupingWords[word]:
				skipList = true
			case skipList || call || promqlWords[word]:
			default:
				if !seen[word] {
					seen[word] = true
					out = append(out, word)
				}
			}
		default:
			i++
		}
	}
	return out
}

// groupingWords introduce a list of label names in parentheses.
var groupingWords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// identAt reads the identifier starting at i: the word, whether a call's parenthesis follows it,
// and where it ends.
func identAt(expr string, i int) (word string, call bool, end int) {
	j := i
	for j < len(expr) && isIdent(expr[j]) {
		j++
	}
	k := j
	for k < len(expr) && expr[k] == ' ' {
		k++
	}
	return expr[i:j], k < len(expr) && expr[k] == '(', j
}

func skipTo(s string, i int, end byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] == end {
			return j + 1
		}
	}
	return len(s)
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
func isIdent(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// LabelNames lists the label names a PromQL expression groups by or matches on: those in
// by/without/on/ignoring (...) lists and on the left of {...} matchers.
func LabelNames(expr string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		n = strings.TrimSpace(n)
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for i := 0; i < len(expr); i++ {
		switch {
		case expr[i] == '{':
			end := skipTo(expr, i, '}')
			for _, m := range splitMatchers(expr[i+1 : max(end-1, i+1)]) {
				if k := strings.IndexAny(m, "=!~"); k > 0 {
					add(m[:k])
				}
			}
			i = end - 1
		case isIdentStart(expr[i]) && (i == 0 || !isIdent(expr[i-1])):
			j := i
			for j < len(expr) && isIdent(expr[j]) {
				j++
			}
			switch expr[i:j] {
			case "by", "without", "on", "ignoring", "group_left", "group_right":
				k := j
				for k < len(expr) && expr[k] == ' ' {
					k++
				}
				if k < len(expr) && expr[k] == '(' {
					end := skipTo(expr, k, ')')
					for _, n := range strings.Split(expr[k+1:end-1], ",") {
						add(n)
					}
					j = end
				}
			}
			i = j - 1
		}
	}
	return out
}

// splitMatchers splits a {...} body at commas outside quotes.
func splitMatchers(s string) []string {
	var out []string
	start, quote := 0, byte(0)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == ',':
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// HasLabel says whether any sample named one of names carries label.
func (s Samples) HasLabel(names []string, label string) bool {
	for _, x := range s {
		if _, ok := x.Labels[label]; ok && slices.Contains(names, x.Name) {
			return true
		}
	}
	return false
}
