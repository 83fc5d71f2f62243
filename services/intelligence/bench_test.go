package intelligence

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
	"github.com/chainintel/chainintel/services/intelligence/internal/heuristics"
	svchttp "github.com/chainintel/chainintel/services/intelligence/internal/http"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
	"github.com/chainintel/chainintel/sim"
	"github.com/jackc/pgx/v5"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkDepositDetection scores the heuristics against the simulator's ground truth: a
// seeded world (INTEL_BENCH_SIM_SEED, default 1) runs INTEL_BENCH_SIM_TXS transactions (default
// 40,000), its curated.json is imported, its transfers and transactions go through the
// consumers' handlers, and one heuristics pass is timed per iteration. It reports deposit
// detection precision and recall (against every ground-truth deposit address, and against those
// that swept at least once, which are the only ones a transfer-based rule can see), and the
// share of clustered addresses whose cluster is one customer.
func BenchmarkDepositDetection(b *testing.B) {
	resetDB(b)
	ctx := context.Background()
	seed := int64(envInt("INTEL_BENCH_SIM_SEED", 1))
	txs := envInt("INTEL_BENCH_SIM_TXS", 40000)
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ImportCurated(ctx, testConfig(b), bytes.NewReader(w.Curated())); err != nil {
		b.Fatal(err)
	}
	st := store.New(pgtest.Pool(b))
	h := events.Handlers{Store: st}
	var offset int64
	hot := map[string]string{} // chain:address → exchange, from the ground truth
	for _, a := range w.Addresses() {
		if a.Role == sim.RoleHotWallet {
			hot[a.Chain+":"+a.Address] = a.Entity
		}
	}
	swept := map[string]bool{}  // chain type:address of deposit addresses seen sweeping
	var consuming time.Duration // in the transfer consumer's handler, for its rate
	consumed := 0
	for done := 0; done < txs; {
		n := min(2000, txs-done)
		batch := w.Next(n)
		done += n
		tm := make([]eventbus.Message[*eventsv1.Transfer], len(batch.Transfers))
		for i, t := range batch.Transfers {
			tm[i] = eventbus.Message[*eventsv1.Transfer]{Topic: eventsv1.TopicTransfers, Offset: offset, Msg: t}
			offset++
			if _, ok := hot[t.Chain+":"+t.To]; ok {
				c, _ := chains.Lookup(t.Chain)
				swept[string(c.Type)+":"+canonical(c.Type, t.From)] = true
			}
		}
		start := time.Now()
		if err := h.Transfers(ctx, tm); err != nil {
			b.Fatal(err)
		}
		consuming += time.Since(start)
		consumed += len(tm)
		xm := make([]eventbus.Message[*eventsv1.Transaction], len(batch.Transactions))
		for i, t := range batch.Transactions {
			xm[i] = eventbus.Message[*eventsv1.Transaction]{Topic: eventsv1.TopicTransactions, Msg: t}
		}
		if err := h.Transactions(ctx, xm); err != nil {
			b.Fatal(err)
		}
	}

	p := heuristics.DefaultParams()
	var sum heuristics.Summary
	b.ResetTimer()
	for range b.N {
		if sum, err = heuristics.Run(ctx, st, p); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()

	truth := map[string]string{} // deposit key → exchange
	owner := map[string]string{} // address key → customer entity (deposits: the payer)
	for _, a := range w.Addresses() {
		c, _ := chains.Lookup(a.Chain)
		k := string(c.Type) + ":" + canonical(c.Type, a.Address)
		switch a.Role {
		case sim.RoleDeposit:
			truth[k] = a.Entity
			owner[k] = a.Owner
		case sim.RoleCustomer, sim.RoleWhale, sim.RoleFund:
			owner[k] = a.Entity
		}
	}
	tp := 0
	for _, d := range sum.Deposits {
		if truth[attribution.Key(d.ChainType, d.Address)] == d.Exchange {
			tp++
		}
	}
	observable, tpObservable := 0, 0
	predicted := map[string]string{}
	for _, d := range sum.Deposits {
		predicted[attribution.Key(d.ChainType, d.Address)] = d.Exchange
	}
	for k, ex := range truth {
		if swept[k] {
			observable++
			if predicted[k] == ex {
				tpObservable++
			}
		}
	}
	precision := float64(tp) / float64(max(1, len(sum.Deposits)))
	recall := float64(tp) / float64(max(1, len(truth)))
	recallObs := float64(tpObservable) / float64(max(1, observable))
	purity := clusterPurity(b, st, owner)
	b.ReportMetric(precision, "precision")
	b.ReportMetric(recallObs, "recall_swept")
	b.ReportMetric(recall, "recall_all")
	b.ReportMetric(purity, "cluster_purity")
	b.ReportMetric(float64(len(sum.Deposits)), "detected")
	b.ReportMetric(float64(consumed)/consuming.Seconds(), "consumed_transfers/s")
	b.Logf("world seed %d, %d txs, %d transfers: %d ground-truth deposit addresses (%d swept at least once); detected %d, %d correct; "+
		"precision %.4f, recall %.4f of swept, %.4f of all; %d clusters over %d addresses, purity %.4f",
		seed, txs, offset, len(truth), observable, len(sum.Deposits), tp, precision, recallObs, recall, sum.Clusters, sum.Clustered, purity)
}

func canonical(t chains.Type, a string) string {
	if t == chains.TypeEVM {
		return strings.ToLower(a)
	}
	return a
}

// clusterPurity is the share of clustered addresses whose cluster's most common owner is their
// own owner.
func clusterPurity(b *testing.B, st *store.Store, owner map[string]string) float64 {
	rows, err := st.Pool().Query(context.Background(), "SELECT chain_type || ':' || address, cluster_ids[1] FROM intel.addresses WHERE cluster_ids <> '{}'")
	if err != nil {
		b.Fatal(err)
	}
	members := map[string][]string{}
	for rows.Next() {
		var k, c string
		if err := rows.Scan(&k, &c); err != nil {
			b.Fatal(err)
		}
		members[c] = append(members[c], k)
	}
	rows.Close()
	pure, total := 0, 0
	for _, ms := range members {
		count := map[string]int{}
		best := 0
		for _, m := range ms {
			count[owner[m]]++
			best = max(best, count[owner[m]])
		}
		pure += best
		total += len(ms)
	}
	if total == 0 {
		return 0
	}
	return float64(pure) / float64(total)
}

// BenchmarkAddressLookup measures address lookups through the real router with
// INTEL_BENCH_ADDRESSES labelled addresses (default 1,000,000, spread over 1,000 entities):
// single GETs and POST batches of 1,000, each iteration one request, reporting p50 and p99.
func BenchmarkAddressLookup(b *testing.B) {
	resetDB(b)
	ctx := context.Background()
	n := envInt("INTEL_BENCH_ADDRESSES", 1_000_000)
	pool := pgtest.Pool(b)
	start := time.Now()
	ents := make([][]any, 1000)
	for i := range ents {
		ents[i] = []any{fmt.Sprintf("bench-entity-%04d", i), fmt.Sprintf("Bench Entity %d", i), "cex", "bench", int64(i + 1)}
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"intel", "entities"}, []string{"id", "name", "type", "source", "version"}, pgx.CopyFromRows(ents)); err != nil {
		b.Fatal(err)
	}
	// Addresses are made from their index when needed, so the benchmark holds no million
	// strings of its own for the garbage collector to walk.
	addrOf := func(i int) string { return fmt.Sprintf("0x%040x", uint64(i)*0x9e3779b97f4a7c15+1) }
	// Copied in parts: each row also writes the change log (its trigger), and on a busy machine
	// one COPY of a million rows can outlast the test database's statement timeout.
	const part = 100_000
	rows := make([][]any, 0, part)
	for lo := 0; lo < n; lo += part {
		rows = rows[:0]
		for i := lo; i < min(n, lo+part); i++ {
			rows = append(rows, []any{"evm", addrOf(i), fmt.Sprintf("bench-entity-%04d", i%1000), "Wallet " + strconv.Itoa(i), float32(1), "bench", int64(1000 + i)})
		}
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"intel", "addresses"}, []string{"chain_type", "address", "entity_id", "label", "confidence", "source", "version"}, pgx.CopyFromRows(rows)); err != nil {
			b.Fatal(err)
		}
	}
	rows = nil
	runtime.GC()
	if _, err := pool.Exec(ctx, "SELECT setval('intel.attribution_version', $1)", int64(1000+n)); err != nil {
		b.Fatal(err)
	}
	loaded := time.Since(start)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start = time.Now()
	api := newTestAPI(b, nil, nil)
	cacheLoad := time.Since(start)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.Logf("%d labelled addresses: stored in %s, cache loaded in %s (%d addresses, heap +%d MiB)",
		n, loaded.Round(time.Millisecond), cacheLoad.Round(time.Millisecond), api.cache.Len(), (int64(after.HeapAlloc)-int64(before.HeapAlloc))>>20)
	r := rand.New(rand.NewPCG(1, 2))

	b.Run("single", func(b *testing.B) {
		cpu0 := cpuTime()
		lat := make([]time.Duration, 0, b.N)
		for range b.N {
			a := addrOf(r.IntN(n))
			t0 := time.Now()
			code, body := api.do(b, "GET", "/intelligence/address/"+a, "", nil)
			lat = append(lat, time.Since(t0))
			if code != 200 || !strings.Contains(body, `"serviceEntity"`) {
				b.Fatalf("%d %s", code, body)
			}
		}
		reportPercentiles(b, lat)
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu_ms/op")
	})
	b.Run("batch1000", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		var sb strings.Builder
		var cpu time.Duration
		for range b.N {
			sb.Reset()
			sb.WriteString(`{"addresses":[`)
			for j := range 1000 {
				if j > 0 {
					sb.WriteByte(',')
				}
				sb.WriteString(`"` + addrOf(r.IntN(n)) + `"`)
			}
			sb.WriteString("]}")
			body := sb.String()
			t0, c0 := time.Now(), cpuTime()
			code, out := api.do(b, "POST", "/intelligence/address/batch", body, nil)
			lat = append(lat, time.Since(t0))
			cpu += cpuTime() - c0
			if code != 200 {
				b.Fatalf("%d %s", code, out[:min(len(out), 300)])
			}
		}
		reportPercentiles(b, lat)
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu_ms/op")
	})
	// Search over the same million labelled addresses, every category on (10 results each):
	// in turn a label prefix, an address prefix and an entity name.
	b.Run("search", func(b *testing.B) { benchSearch(b, api, n, addrOf, r) })
}

// benchSearch sends the same queries to two routers over one cache and database, in rotating
// order request by request so that both see the same load: "before", every category its own
// concurrent PostgreSQL statement (app.Service.SearchPerCategory), and "after", the service's
// plan (entities from memory, the rest in one batch); both answers must be equal. A third
// request asks the service's plan with addresses, tags and tokens off ("memory": no PostgreSQL
// at all), to show how much of the tail is PostgreSQL's. It reports p50 and p99 of each, the
// after/before ratio, and p99 over the 20 ms target (issue 29).
func benchSearch(b *testing.B, api *testAPI, n int, addrOf func(int) string, r *rand.Rand) {
	baseline := *api.app
	baseline.SearchPerCategory = true
	e := httpx.NewEngine(httpx.EngineOptions{Service: Name, Logger: slog.New(slog.DiscardHandler)})
	svchttp.Register(e, &baseline)
	before := &testAPI{h: e, cache: api.cache, app: &baseline}
	// Percentiles need samples: at least 1,000 queries a plan whatever b.N (make bench runs 1x),
	// so that the p99 is not one unlucky request.
	runs := max(b.N, 1000)
	var lat [3][]time.Duration
	var cpu [3]time.Duration
	plans := [3]*testAPI{before, api, api}
	for i := range runs {
		var q string
		switch i % 3 {
		case 0:
			q = "wallet%20" + strconv.Itoa(r.IntN(n))
		case 1:
			q = addrOf(r.IntN(n))[:8]
		default:
			q = "bench%20entity%20" + strconv.Itoa(r.IntN(1000))
		}
		var bodies [3]string
		for j := range 3 {
			k := (i + j) % 3 // rotate which plan goes first
			path := "/intelligence/search?query=" + q
			if k == 2 {
				path += "&serviceAddresses=0&tags=0&tokens=0"
			}
			t0, c0 := time.Now(), cpuTime()
			code, out := plans[k].do(b, "GET", path, "", nil)
			lat[k] = append(lat[k], time.Since(t0))
			cpu[k] += cpuTime() - c0
			if code != 200 || k < 2 && strings.Contains(out, `"serviceAddresses":[]`) && i%3 != 2 {
				b.Fatalf("%s: %d %s", path, code, out[:min(len(out), 300)])
			}
			bodies[k] = out
		}
		if bodies[0] != bodies[1] {
			b.Fatalf("%s: the plans answer differently:\nbefore %s\nafter  %s", q, bodies[0], bodies[1])
		}
	}
	reportSearch(b, lat, cpu, runs)
}

func reportSearch(b *testing.B, lat [3][]time.Duration, cpu [3]time.Duration, runs int) {
	var p50, p99 [3]float64
	for k := range lat {
		p50[k], p99[k] = percentile(lat[k], 0.50), percentile(lat[k], 0.99)
	}
	b.ReportMetric(p50[0], "before_p50_ms")
	b.ReportMetric(p99[0], "before_p99_ms")
	b.ReportMetric(float64(cpu[0].Microseconds())/1000/float64(runs), "before_cpu_ms/op")
	b.ReportMetric(p50[1], "p50_ms")
	b.ReportMetric(p99[1], "p99_ms")
	b.ReportMetric(float64(lat[1][len(lat[1])-1].Microseconds())/1000, "max_ms")
	b.ReportMetric(float64(cpu[1].Microseconds())/1000/float64(runs), "cpu_ms/op")
	b.ReportMetric(p50[2], "memory_p50_ms")
	b.ReportMetric(p99[2], "memory_p99_ms")
	b.ReportMetric(p99[1]/p99[0], "p99_after/before")
	// The target is p99 ≤ 20 ms (issue 29): below 1 meets it.
	b.ReportMetric(p99[1]/20, "p99/target")
}

// percentile sorts lat and returns its p-th percentile in milliseconds.
func percentile(lat []time.Duration, p float64) float64 {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
}

// cpuTime is the process's user and system CPU time: with other work on the machine, wall-clock
// latency overstates what a request costs, and this shows it.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max_ms")
}
