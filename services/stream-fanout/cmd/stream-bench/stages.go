package main

import (
	"bufio"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// stage is one point a delivery passed, with the p50 and p99 of the time from its publish
// (the broker's timestamp on the server's side) to it.
type stage struct {
	name     string
	p50, p99 time.Duration
}

// serverStages reads the server's stream_delivery_stage_seconds histogram (per delivery,
// cumulative from the broker's timestamp) and returns each stage's p50 and p99, interpolated
// within the bucket; nil when /metrics has none.
func serverStages(opsAddr string) []stage {
	resp, err := http.Get("http://" + opsAddr + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	type bucket struct{ le, n float64 }
	hist := map[string][]bucket{}
	var order []string
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, "stream_delivery_stage_seconds_bucket{") {
			continue
		}
		name, le := label(line, "stage"), label(line, "le")
		f := strings.Fields(line)
		n, _ := strconv.ParseFloat(f[len(f)-1], 64)
		v, err := strconv.ParseFloat(le, 64)
		if le == "+Inf" || err != nil {
			v = 1e9
		}
		if _, ok := hist[name]; !ok {
			order = append(order, name)
		}
		hist[name] = append(hist[name], bucket{v, n})
	}
	// The server lists its stages in no particular order; print them in a delivery's.
	rank := map[string]int{"fetched": 1, "matched": 2, "taken": 3, "batched": 4, "written": 5}
	sort.SliceStable(order, func(i, j int) bool { return rank[order[i]] < rank[order[j]] })
	var out []stage
	for _, name := range order {
		b := hist[name]
		sort.Slice(b, func(i, j int) bool { return b[i].le < b[j].le })
		pct := func(p float64) time.Duration {
			want, lo, prev := p*b[len(b)-1].n, 0.0, 0.0
			for _, x := range b {
				if x.n >= want && x.n > 0 {
					frac := (want - prev) / max(x.n-prev, 1)
					return time.Duration((lo + frac*(min(x.le, 60)-lo)) * float64(time.Second))
				}
				lo, prev = x.le, x.n
			}
			return 0
		}
		out = append(out, stage{name, pct(0.50), pct(0.99)})
	}
	return out
}

// label returns the value of label k in a Prometheus text line.
func label(line, k string) string {
	_, v, ok := strings.Cut(line, k+`="`)
	if !ok {
		return ""
	}
	v, _, _ = strings.Cut(v, `"`)
	return v
}

// printStages prints a run's delivery stages on one line: the publisher's acknowledgement,
// the server's stages, and the client's read.
func printStages(r result) {
	if len(r.stages) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "acked by the broker %s/%s", dur(r.pub50), dur(r.pub99))
	for _, s := range r.stages {
		fmt.Fprintf(&b, ", %s %s/%s", s.name, dur(s.p50), dur(s.p99))
	}
	fmt.Fprintf(&b, ", read by the client %s/%s", dur(r.p50), dur(r.p99))
	fmt.Printf("%-30s stages p50/p99 from publish: %s\n", "", b.String())
}
