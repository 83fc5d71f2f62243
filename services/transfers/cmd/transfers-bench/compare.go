package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// compare prints two builds' figures side by side, with the current's over the baseline's: the
// write path's rates (rows/s; a ratio above 1 is faster) and each query's p50 and p99 (a ratio
// below 1 is faster). Its arguments are comma-separated lists of the outputs of the baseline
// build's runs and of the current build's, over the same row count and, for the queries, the
// same database (scripts/bench-transfers-baseline.sh). A query timed in several passes shows
// each build's best pass (the least disturbed on a shared machine) and the spread of the
// baseline's passes (its slowest p50 over its fastest): ratios within it are noise.
func compare(baseFiles, curFiles string) error {
	base, err := readFigures(strings.Split(baseFiles, ","))
	if err != nil {
		return err
	}
	cur, err := readFigures(strings.Split(curFiles, ","))
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
	fmt.Printf("\n%-62s %10s %10s %6s %10s %10s %6s %7s\n", "query (best pass of each build)", "base p50", "cur p50", "ratio",
		"base p99", "cur p99", "ratio", "spread")
	for _, k := range base.queryOrder {
		c, ok := cur.queries[k]
		if !ok {
			continue
		}
		b := base.queries[k]
		b50, c50, b99, c99 := slices.Min(b.p50), slices.Min(c.p50), slices.Min(b.p99), slices.Min(c.p99)
		spread := "-"
		if len(b.p50) > 1 {
			spread = fmt.Sprintf("%.2f", float64(slices.Max(b.p50))/float64(b50))
		}
		fmt.Printf("%-62s %10s %10s %6.2f %10s %10s %6.2f %7s\n", k, b50, c50, float64(c50)/float64(b50), b99, c99,
			float64(c99)/float64(b99), spread)
	}
	return nil
}

// figures are what a build's runs printed: the write path's rates by name (the first run's that
// prints each), each query's p50 and p99 of every pass.
type figures struct {
	rates      map[string]float64
	rateOrder  []string
	queries    map[string]*passes
	queryOrder []string
}

// passes are a query's percentiles, one of each pass.
type passes struct{ p50, p99 []time.Duration }

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

func readFigures(files []string) (*figures, error) {
	out := &figures{rates: map[string]float64{}, queries: map[string]*passes{}}
	for _, file := range files {
		if err := out.read(file); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// read adds the figures of one run's output.
func (f *figures) read(file string) error {
	r, err := os.Open(file)
	if err != nil {
		return err
	}
	defer r.Close()
	inTable := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		f.rateLine(line)
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
		q := f.queries[name]
		if q == nil {
			q = &passes{}
			f.queries[name] = q
			f.queryOrder = append(f.queryOrder, name)
		}
		q.p50, q.p99 = append(q.p50, p50), append(q.p99, p99)
	}
	return sc.Err()
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
				f.rates[name] = v
			}
		}
	}
}
