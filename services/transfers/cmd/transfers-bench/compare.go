package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// compare prints two runs' figures side by side, with the second's over the first's: the write
// path's rates (rows/s; a ratio above 1 is faster) and each query's p50 and p99 (a ratio below 1
// is faster). Its arguments are the output of a baseline build's run and of the current build's,
// over the same row count and, for the queries, the same database (scripts/bench.sh,
// BENCH_TRANSFERS_BASELINE).
func compare(baseFile, curFile string) error {
	base, err := readFigures(baseFile)
	if err != nil {
		return err
	}
	cur, err := readFigures(curFile)
	if err != nil {
		return err
	}
	fmt.Printf("%-62s %12s %12s %8s\n", "write path (rows/s)", "baseline", "current", "ratio")
	for _, k := range base.rateOrder {
		c, ok := cur.rates[k]
		if !ok {
			continue
		}
		b := base.rates[k]
		fmt.Printf("%-62s %12.0f %12.0f %8.2f\n", k, b, c, c/b)
	}
	fmt.Printf("\n%-55s %10s %10s %6s %10s %10s %6s\n", "query (latency)", "base p50", "cur p50", "ratio", "base p99", "cur p99", "ratio")
	for _, k := range base.queryOrder {
		c, ok := cur.queries[k]
		if !ok {
			continue
		}
		b := base.queries[k]
		fmt.Printf("%-55s %10s %10s %6.2f %10s %10s %6.2f\n", k, b[0], c[0], float64(c[0])/float64(b[0]), b[1], c[1], float64(c[1])/float64(b[1]))
	}
	return nil
}

// figures are what a run printed: the write path's rates by name, each query's p50 and p99.
type figures struct {
	rates      map[string]float64
	rateOrder  []string
	queries    map[string][2]time.Duration
	queryOrder []string
}

// The write path's lines (run's output), and the rates each names in order.
var rateLines = []struct {
	re    *regexp.Regexp
	names []string
}{
	{regexp.MustCompile(`^ingest, first \d+ rows, rollups inline: (\d+) rows/s`), []string{"first rows, rollups inline"}},
	{regexp.MustCompile(`^ingest, first \d+ rows: raw COPY (\d+) rows/s \(before the write path (\d+), after it (\d+)\); write path \(COPY, dedupe, rollups queued\) (\d+) rows/s`),
		[]string{"first rows, raw COPY (the faster)", "first rows, raw COPY before the write path", "first rows, raw COPY after the write path", "first rows, write path (rollups queued)"}},
	{regexp.MustCompile(`^\s+rollups applied (\d+) rows/s; writes and rollups one after the other (\d+) rows/s`),
		[]string{"first rows, rollups applied", "first rows, writes and rollups one after the other"}},
	{regexp.MustCompile(`^ingest, the other \d+ rows, writers and rollup workers together: writes (\d+) rows/s, until the rollups caught up (\d+) rows/s`),
		[]string{"other rows, writes beside the rollup workers", "other rows, until the rollups caught up"}},
}

func readFigures(file string) (*figures, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := &figures{rates: map[string]float64{}, queries: map[string][2]time.Duration{}}
	inTable := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		out.rateLine(line)
		fields := strings.Fields(line)
		if len(fields) == 4 && fields[0] == "query" && fields[1] == "p50" {
			inTable = true
			continue
		}
		if !inTable || len(fields) < 4 || strings.HasPrefix(line, " ") {
			continue
		}
		p50, err1 := time.ParseDuration(fields[len(fields)-3])
		p99, err2 := time.ParseDuration(fields[len(fields)-2])
		if err1 != nil || err2 != nil {
			continue
		}
		name := strings.Join(fields[:len(fields)-3], " ")
		if _, dup := out.queries[name]; !dup {
			out.queryOrder = append(out.queryOrder, name)
		}
		out.queries[name] = [2]time.Duration{p50, p99}
	}
	return out, sc.Err()
}

// rateLine records the rates line names, if it is one of the write path's lines.
func (f *figures) rateLine(line string) {
	for _, l := range rateLines {
		m := l.re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for i, name := range l.names {
			v, err := strconv.ParseFloat(m[i+1], 64)
			if err != nil || v == 0 {
				continue
			}
			if _, dup := f.rates[name]; !dup {
				f.rateOrder = append(f.rateOrder, name)
			}
			f.rates[name] = v
		}
	}
}
