package http

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/user-labels/client"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
)

// Benchmarks of the two reads other parts of the platform lean on, each through a real HTTP
// server on loopback over the package's PostgreSQL database. They report percentiles of the
// per-request latency (ms) with b.ReportMetric; they assert nothing about time.
//
//	go test -run '^$' -bench . -benchtime 500x ./internal/http/

// reportLatency reports p50, p99 and max of ds in milliseconds.
func reportLatency(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	at := func(p float64) float64 {
		i := int(p * float64(len(ds)-1))
		return float64(ds[i].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(at(1), "max-ms")
	b.ReportMetric(0, "ns/op") // the percentiles say more than the mean
}

// benchServer serves the real router on loopback.
func benchServer(b *testing.B, opts ...app.Option) (*env, *httptest.Server) {
	ev := newEnvWith(b, opts...)
	srv := httptest.NewServer(ev.h)
	b.Cleanup(srv.Close)
	return ev, srv
}

// BenchmarkLabelsRead10k is GET /user/labels for a caller with 10,000 labels: "cached" as the
// service runs (the encoded list is reused while the label set's version is unchanged, which
// costs one small query), "uncached" with the cache off (every read loads and encodes the
// 10,000 labels, as the first read after a change does).
func BenchmarkLabelsRead10k(b *testing.B) {
	b.Run("cached", func(b *testing.B) { benchLabelsRead(b, app.WithLabelCache(64<<20)) })
	b.Run("uncached", func(b *testing.B) { benchLabelsRead(b) })
}

func benchLabelsRead(b *testing.B, opts ...app.Option) {
	ev, srv := benchServer(b, opts...)
	user := newUser()
	svc := app.New(ev.store, app.NewChainTypes(nil))
	in := make([]app.LabelInput, 10000)
	for i := range in {
		in[i] = app.LabelInput{Name: fmt.Sprintf("label %d", i), Note: "note of the label", Address: evmAddr(i), ChainType: "evm"}
	}
	if _, err := svc.PutLabels(context.Background(), user, in); err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{Transport: httpx.NewTransport()}
	get := func() {
		req, _ := http.NewRequest("GET", srv.URL+"/user/labels", nil)
		ev.signer.Sign(req.Header, identity(user), time.Now())
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get(httpx.HeaderRows) != "10000" {
			b.Fatalf("status %d, rows %s, %d bytes", resp.StatusCode, resp.Header.Get(httpx.HeaderRows), n)
		}
	}
	for range 20 { // warm the pool, the connection and PostgreSQL's cache
		get()
	}
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		get()
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	reportLatency(b, ds)
}

// BenchmarkInternalLookup1k is the internal batch lookup of 1,000 addresses through the real
// client, for a caller with 10,000 labels and 100 entities of 100 addresses; a third of the
// addresses asked about have a label, a third are in an entity. "indexed" as the service runs
// (the caller's labels and memberships are kept in memory while their versions are unchanged,
// which costs one small query), "uncached" with the cache off (two queries of 1,000 addresses
// each, as when a caller's index is being rebuilt after a change or is too big to keep).
func BenchmarkInternalLookup1k(b *testing.B) {
	b.Run("indexed", func(b *testing.B) { benchLookup(b, app.WithLookupCache(64<<20)) })
	b.Run("uncached", func(b *testing.B) { benchLookup(b) })
}

func benchLookup(b *testing.B, opts ...app.Option) {
	ev, srv := benchServer(b, opts...)
	user := newUser()
	ctx := httpx.WithIdentity(context.Background(), identity(user))
	svc := app.New(ev.store, app.NewChainTypes(nil))
	in := make([]app.LabelInput, 10000)
	for i := range in {
		in[i] = app.LabelInput{Name: fmt.Sprintf("label %d", i), Note: "note of the label", Address: evmAddr(i), ChainType: "evm"}
	}
	if _, err := svc.PutLabels(ctx, user, in); err != nil {
		b.Fatal(err)
	}
	bodies := make([]app.EntityBody, 100)
	for i := range bodies {
		bodies[i] = app.EntityBody{Name: fmt.Sprintf("entity %d", i), Addresses: map[string][]string{"evm": evmAddrs(20000+i*100, 100)}}
	}
	if _, err := svc.CreateEntities(ctx, user, bodies, true); err != nil {
		b.Fatal(err)
	}
	refs := make([]client.AddressRef, 0, 1000)
	for i := range 334 {
		refs = append(refs, client.AddressRef{ChainType: "evm", Address: evmAddr(i * 29)})       // labelled
		refs = append(refs, client.AddressRef{ChainType: "evm", Address: evmAddr(20000 + i*29)}) // in an entity
		refs = append(refs, client.AddressRef{ChainType: "evm", Address: evmAddr(90000 + i)})    // nothing
	}
	refs = refs[:1000]
	c, err := client.New(srv.URL, ev.signer, nil)
	if err != nil {
		b.Fatal(err)
	}
	lookup := func() {
		got, err := c.Lookup(ctx, refs)
		if err != nil {
			b.Fatal(err)
		}
		if len(got.Labels) != 334 || len(got.Entities) != 333 {
			b.Fatalf("%d labels, %d entity memberships", len(got.Labels), len(got.Entities))
		}
	}
	for range 20 {
		lookup()
	}
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		lookup()
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	reportLatency(b, ds)
}
