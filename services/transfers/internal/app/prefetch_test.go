package app_test

import (
	"context"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// pageStore is a store whose page read, when it names the addresses its transfers are among
// (prefetch), reads their attributions beside the page (Page.Attributions) as the store's plans
// that know them early do, and which records every attribution read. Addresses starting 0xe
// belong to entity "ex".
type pageStore struct {
	app.Store // other methods are not used
	prefetch  []string
	rows      []store.TransferRow

	mu    sync.Mutex
	reads [][]string
}

func (s *pageStore) PageTransfers(ctx context.Context, f store.TransferFilter, p store.Page) (store.TransferPage, error) {
	pg := store.TransferPage{Rows: s.rows, Count: len(s.rows)}
	if s.prefetch != nil && p.Attributions {
		a := &store.Attributed{Asked: map[store.AddressKey]bool{}}
		var keys []store.AddressKey
		for _, addr := range s.prefetch {
			k := store.AddressKey{ChainType: "evm", Address: addr}
			a.Asked[k] = true
			keys = append(keys, k)
		}
		var err error
		if a.Attrs, err = s.Attributions(ctx, keys); err != nil {
			return pg, err
		}
		pg.Attributed = a
	}
	return pg, nil
}

func (s *pageStore) ResolveSet(ctx context.Context, set store.AddrSet) (store.AddrSet, map[string]bool, error) {
	set.Size = len(set.Addrs)
	return set, map[string]bool{}, nil
}

func (s *pageStore) Attributions(ctx context.Context, keys []store.AddressKey) (map[store.AddressKey]store.Attribution, error) {
	out := map[store.AddressKey]store.Attribution{}
	var read []string
	for _, k := range keys {
		read = append(read, k.Address)
		if strings.HasPrefix(k.Address, "0xe") {
			out[k] = store.Attribution{ChainType: k.ChainType, Address: k.Address, Entity: &store.Entity{ID: "ex", Name: "Ex", Type: "cex"}}
		}
	}
	slices.Sort(read)
	s.mu.Lock()
	s.reads = append(s.reads, read)
	s.mu.Unlock()
	return out, nil
}

// A page whose read names its addresses early renders from the attributions read beside it,
// and reads nothing after it; one naming fewer than the page holds (or none) is read after it.
func TestAttributionsReadBesideThePage(t *testing.T) {
	cs, err := chains.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	row := func(from, to string) store.TransferRow {
		return store.TransferRow{Chain: "ethereum", ID: from + to, TxHash: "0x1", BlockHash: "0x2", BlockTime: time.Unix(1700000000, 0),
			From: from, To: to, TokenID: "ethereum", TokenDecimals: 18, Amount: big.NewInt(1)}
	}
	rows := []store.TransferRow{row("0xe1", "0xa1"), row("0xa2", "0xe2")}
	for _, c := range []struct {
		name     string
		prefetch []string
		reads    [][]string
	}{
		{"named early", []string{"0xe1", "0xa1", "0xa2", "0xe2", "0xa3"}, [][]string{{"0xa1", "0xa2", "0xa3", "0xe1", "0xe2"}}},
		{"one missing", []string{"0xe1", "0xa1", "0xa2"}, [][]string{{"0xa1", "0xa2", "0xe1"}, {"0xa1", "0xa2", "0xe1", "0xe2"}}},
		{"not named", nil, [][]string{{"0xa1", "0xa2", "0xe1", "0xe2"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &pageStore{prefetch: c.prefetch, rows: rows}
			list, err := app.New(st, nil, cs).Transfers(context.Background(), query.Transfers{Flow: "all", SortKey: "time", SortDir: "desc", Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(st.reads, c.reads, slices.Equal) {
				t.Errorf("attribution reads %v, want %v", st.reads, c.reads)
			}
			var got []string
			for _, tr := range list.Transfers {
				for _, a := range []app.AddressInfo{tr.FromAddress, tr.ToAddress} {
					e := "-"
					if a.ServiceEntity != nil {
						e = a.ServiceEntity.ID
					}
					got = append(got, a.Address+":"+e)
				}
			}
			if want := []string{"0xe1:ex", "0xa1:-", "0xa2:-", "0xe2:ex"}; !slices.Equal(got, want) {
				t.Errorf("rendered %v, want %v", got, want)
			}
		})
	}
}
