package main

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/promscrape"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/ws"
)

// stage is one point a delivery passed, with the p50 and p99 of the time from its publish
// (the broker's timestamp on the server's side) to it.
type stage struct {
	name     string
	p50, p99 time.Duration
}

// serverStages reads the server's stream_delivery_stage_seconds histogram (1 delivery in 8
// per connection, cumulative from the broker's timestamp) and returns each stage's p50 and
// p99, interpolated within the bucket, in a delivery's order; nil when /metrics has none.
func serverStages(opsAddr string) []stage {
	samples, err := promscrape.Scrape(context.Background(), http.DefaultClient, "http://"+opsAddr+"/metrics")
	if err != nil {
		return nil
	}
	type bucket struct{ le, n float64 }
	var out []stage
	for _, name := range ws.StageNames {
		var b []bucket
		for _, x := range samples.Select("stream_delivery_stage_seconds_bucket", map[string]string{"stage": name}) {
			le, err := strconv.ParseFloat(x.Labels["le"], 64)
			if err != nil {
				le = 1e9 // +Inf
			}
			b = append(b, bucket{le, x.Value})
		}
		if len(b) == 0 {
			continue
		}
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
