package app_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/chainintel/chainintel/libs/chains"
	intelclient "github.com/chainintel/chainintel/services/intelligence/client"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// rankStore ranks counterparties per chain (its lists, best first) and answers a read with the
// first f.Limit of each chain, as the store does; it records the limits asked for.
type rankStore struct {
	app.Store // other methods are not used
	ranked    map[string][]string
	limits    []int
}

func (s *rankStore) ResolveSet(ctx context.Context, set store.AddrSet) (store.AddrSet, map[string]bool, error) {
	set.Size = len(set.Addrs)
	return set, map[string]bool{}, nil
}

func (s *rankStore) Counterparties(ctx context.Context, f store.CounterpartyFilter) ([]store.Counterparty, error) {
	s.limits = append(s.limits, f.Limit)
	var out []store.Counterparty
	for _, chain := range []string{"base", "ethereum"} {
		for i, a := range s.ranked[chain][:min(f.Limit, len(s.ranked[chain]))] {
			out = append(out, store.Counterparty{Chain: chain, Address: a, In: true, Count: 1, USD: float64(10_000 - i)})
		}
	}
	return out, nil
}

func (s *rankStore) Attributions(ctx context.Context, keys []store.AddressKey) (map[store.AddressKey]store.Attribution, error) {
	return map[store.AddressKey]store.Attribution{}, nil
}

// fakeTags is intelligence's tags of addresses on a chain; it records every address asked.
type fakeTags struct {
	tags  map[string][]string // "<chain>/<address>"
	asked map[string]int
	calls int
}

func (f *fakeTags) Tags(ctx context.Context, chain string, addrs []string) (map[string][]string, error) {
	f.calls++
	if len(addrs) > intelclient.MaxBatch {
		return nil, fmt.Errorf("%d addresses in one call", len(addrs))
	}
	out := map[string][]string{}
	for _, a := range addrs {
		f.asked[chain+"/"+a]++
		if ts := f.tags[chain+"/"+a]; ts != nil {
			out[a] = ts
		}
	}
	return out, nil
}

// A tags filter keeps the first limit tagged counterparties of each chain in rank order, reading
// the ranking deeper while a chain has fewer and more may follow, and asks intelligence about
// each counterparty once, in batches it takes.
func TestTaggedCounterpartiesReadDeeper(t *testing.T) {
	addr := func(i int) string { return fmt.Sprintf("0x%040x", i+1) }
	st := &rankStore{ranked: map[string][]string{}}
	for i := range 2000 {
		st.ranked["ethereum"] = append(st.ranked["ethereum"], addr(i))
	}
	for i := range 10 {
		st.ranked["base"] = append(st.ranked["base"], addr(i))
	}
	tg := &fakeTags{asked: map[string]int{}, tags: map[string][]string{
		"ethereum/" + addr(5):    {"other"},
		"ethereum/" + addr(699):  {"other", "hot"},
		"ethereum/" + addr(1399): {"kyc"},
		"ethereum/" + addr(1999): {"hot"},
		"base/" + addr(3):        {"hot"},
		"ethereum/" + addr(3):    {"unrelated"}, // the same address, another chain's tags
	}}
	cs, _ := chains.NewSet(nil)
	a := app.New(st, nil, cs, app.WithTags(tg))
	got, err := a.Counterparties(context.Background(), query.Ref{Kind: query.KindAddress, Value: addr(5000)},
		query.Counterparties{Flow: "either", Limit: 3, Tags: []string{"hot", "kyc"}})
	if err != nil {
		t.Fatal(err)
	}
	names := func(cps []app.Counterparty) []string {
		var s []string
		for _, c := range cps {
			s = append(s, c.Address.Address)
		}
		return s
	}
	if g, w := names(got["ethereum"]), []string{addr(699), addr(1399), addr(1999)}; !slices.Equal(g, w) {
		t.Errorf("ethereum: got %v, want %v", g, w)
	}
	if g, w := names(got["base"]), []string{addr(3)}; !slices.Equal(g, w) {
		t.Errorf("base: got %v, want %v", g, w)
	}
	if !slices.Equal(st.limits, []int{256, 1024, 4096}) {
		t.Errorf("read the ranking with limits %v, want 256, 1024, 4096", st.limits)
	}
	if len(tg.asked) != 2010 {
		t.Errorf("asked about %d counterparties, want all 2010", len(tg.asked))
	}
	for k, n := range tg.asked {
		if n != 1 {
			t.Errorf("asked about %s %d times", k, n)
		}
	}
	// Once each chain has its limit, nothing deeper is read or asked.
	st.limits, tg.asked = nil, map[string]int{}
	got, err = a.Counterparties(context.Background(), query.Ref{Kind: query.KindAddress, Value: addr(5000)},
		query.Counterparties{Flow: "either", Limit: 1, Tags: []string{"hot"}})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := names(got["ethereum"]), []string{addr(699)}; !slices.Equal(g, w) {
		t.Errorf("limit 1: got %v, want %v", g, w)
	}
	if !slices.Equal(st.limits, []int{256, 1024}) || len(tg.asked) != 10+1024 {
		t.Errorf("limit 1: read with limits %v and asked about %d, want 256, 1024 and 1034", st.limits, len(tg.asked))
	}
}
