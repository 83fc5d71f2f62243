package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// A mix is how the workload's clients choose their filters. The transfers are the same in every
// mix; only what the clients follow differs.
type mix struct {
	name, about string
	filters     func(w *world, i int, rng *rand.Rand) []spec
}

var mixes = map[string]mix{
	"watchlists": {"watchlists", "each client holds 1 to 5 filters (uniform, 3 on average), each 45 in 100 one address (from or to),\n" +
		"          20 an entity (from or to; half of them one of the 10 big exchanges), 10 an entity type (from or to) with usdGte 1M (half of them type:cex),\n" +
		"          15 a token with usdGte 100k (half of them one of the 5 most-followed tokens), 10 usdGte >= 10M only", watchlist},
	"single": {"single", "each client holds one filter: 4 in 10 an address, 3 an entity, 1 an entity type with usdGte 100k,\n" +
		"          1 a token with usdGte 10k, 1 usdGte >= 10M", func(w *world, i int, rng *rand.Rand) []spec { return []spec{w.filter(i, rng)} }},
}

// mixFromEnv is the mix BENCH_STREAM_MIX names (watchlists unless it says single).
func mixFromEnv() (mix, error) {
	name := os.Getenv("BENCH_STREAM_MIX")
	if name == "" {
		name = "watchlists"
	}
	m, ok := mixes[name]
	if !ok {
		return mix{}, fmt.Errorf("BENCH_STREAM_MIX=%s: want watchlists or single", name)
	}
	return m, nil
}

// spec is one filter of a client: side ("from", "to", or "tokens"; "" for usdGte alone), the
// one value it names, and its usdGte (0: none).
type spec struct {
	side, target string
	floor        int
}

// payload is the filter as a subscribe message carries it.
func (s spec) payload() map[string]any {
	f := map[string]any{}
	if s.side != "" {
		f[s.side] = []string{s.target}
	}
	if s.floor > 0 {
		f["usdGte"] = s.floor
	}
	return f
}

// bigExchanges are the entities most clients follow: ten of type cex (types[e%4]).
func bigExchange(rng *rand.Rand) int { return 4 * rng.IntN(10) }

// watchlist is client i's filters in the watchlists mix: a trading desk's watch list of a few
// addresses, exchanges, entity types and tokens, the popular ones followed by many clients.
func watchlist(w *world, _ int, rng *rand.Rand) []spec {
	out := make([]spec, 1+rng.IntN(5))
	for j := range out {
		side := []string{"from", "to"}[rng.IntN(2)]
		switch r := rng.IntN(100); {
		case r < 45:
			out[j] = spec{side: side, target: w.addrs[rng.IntN(len(w.addrs))]}
		case r < 65:
			e := rng.IntN(w.entities)
			if rng.IntN(2) == 0 {
				e = bigExchange(rng)
			}
			out[j] = spec{side: side, target: fmt.Sprintf("ent-%d", e)}
		case r < 75:
			t := types[rng.IntN(len(types))]
			if rng.IntN(2) == 0 {
				t = "cex"
			}
			out[j] = spec{side: side, target: "type:" + t, floor: 1_000_000}
		case r < 90:
			tok := rng.IntN(len(w.tokens))
			if rng.IntN(2) == 0 {
				tok = rng.IntN(5)
			}
			out[j] = spec{side: "tokens", target: w.tokens[tok], floor: 100_000}
		default:
			out[j] = spec{floor: 10_000_000 + rng.IntN(90_000_000)}
		}
	}
	return out
}

// filter is client i's one filter in the single mix.
func (w *world) filter(i int, rng *rand.Rand) spec {
	switch i % 10 {
	case 0, 1, 2, 3:
		side := []string{"from", "to"}[rng.IntN(2)]
		return spec{side: side, target: w.addrs[rng.IntN(len(w.addrs))]}
	case 4, 5, 6:
		return spec{side: "to", target: fmt.Sprintf("ent-%d", rng.IntN(w.entities))}
	case 7:
		return spec{side: "from", target: "type:" + types[rng.IntN(len(types))], floor: 100_000}
	case 8:
		return spec{side: "tokens", target: w.tokens[rng.IntN(len(w.tokens))], floor: 10_000}
	}
	return spec{floor: 10_000_000 + rng.IntN(90_000_000)}
}

// workload is every client's filters, the same for every server measured.
func workload(w *world, m mix, clients int) [][]spec {
	rng := rand.New(rand.NewPCG(7, 8))
	out := make([][]spec, clients)
	for i := range out {
		out[i] = m.filters(w, i, rng)
	}
	return out
}

// sub is one filter of one client: a delivery is owed per filter a transfer matches.
type sub struct {
	client, filter int
	floor          float64
}

// matcher is the bench's own index of the clients' filters, by side and value.
type matcher struct {
	w   *world
	by  map[string][]sub
	big []sub // usdGte alone
}

func newMatcher(w *world, subs [][]spec) *matcher {
	m := &matcher{w: w, by: map[string][]sub{}}
	for i, fs := range subs {
		for j, f := range fs {
			s := sub{i, j, float64(f.floor)}
			if f.side == "" {
				m.big = append(m.big, s)
				continue
			}
			k := f.side + " " + f.target
			m.by[k] = append(m.by[k], s)
		}
	}
	return m
}

// match returns the filters t matches. An entity matches its addresses and its deposit
// addresses, an entity type its entities' addresses (not deposit addresses).
func (m *matcher) match(t *eventsv1.Transfer, idx map[string]int) []sub {
	usd := *t.HistoricalUsd
	var out []sub
	add := func(k string) {
		for _, s := range m.by[k] {
			if usd >= s.floor {
				out = append(out, s)
			}
		}
	}
	add("from " + t.From)
	add("to " + t.To)
	add("tokens " + t.TokenId)
	for _, s := range m.big {
		if usd >= s.floor {
			out = append(out, s)
		}
	}
	for _, p := range [2][2]string{{"from", t.From}, {"to", t.To}} {
		side, i := p[0], idx[p[1]]
		e, d := m.w.entityOf[i], m.w.depOf[i]
		if e >= 0 {
			add(side + " ent-" + strconv.Itoa(e))
			add(side + " type:" + types[e%len(types)])
		}
		if d >= 0 && d != e {
			add(side + " ent-" + strconv.Itoa(d))
		}
	}
	return out
}

// channel is the peer's channel of one client's filter.
func (s sub) channel() string { return "c" + strconv.Itoa(s.client) + "." + strconv.Itoa(s.filter) }
