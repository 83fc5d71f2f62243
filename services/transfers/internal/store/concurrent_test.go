package store_test

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
)

// The transactions, transfers and swaps of the same new blocks are written by three consumers
// at once; each writer records the blocks. They must never deadlock on each other.
func TestConcurrentWritersOfTheSameBlocks(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	reset(t, pool)
	st := newStore(pool)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for round := 0; round < 15; round++ {
		var txs []store.TransactionRow
		var trs []store.TransferRow
		var sws []store.SwapRow
		for b := 0; b < 60; b++ {
			num := int64(round*1000 + b)
			bh := fmt.Sprintf("0x%064x", num+1)
			at := t0.Add(time.Duration(num) * 12 * time.Second)
			for i := 0; i < 3; i++ {
				h := fmt.Sprintf("0x%060x%04x", num, i)
				from, to := fmt.Sprintf("0x%040x", rand.IntN(50)+1), fmt.Sprintf("0x%040x", rand.IntN(50)+1)
				txs = append(txs, store.TransactionRow{Chain: "ethereum", Hash: h, BlockHash: bh, BlockNumber: num, BlockTime: at,
					TxIndex: int32(i), From: from, To: to, Success: true, Value: big.NewInt(1), GasPrice: big.NewInt(1),
					EffectiveGasPrice: big.NewInt(1), Fee: big.NewInt(1)})
				trs = append(trs, store.TransferRow{Chain: "ethereum", ID: fmt.Sprintf("%s_%d", h, i), TxHash: h, BlockHash: bh,
					BlockNumber: num, BlockTime: at, TxIndex: int32(i), From: from, To: to, TokenID: "ethereum", TokenSymbol: "ETH",
					TokenDecimals: 18, Amount: big.NewInt(1), UnitValue: 1e-18})
				sws = append(sws, store.SwapRow{Chain: "ethereum", ID: fmt.Sprintf("%s_s%d", h, i), TxHash: h, BlockHash: bh,
					BlockNumber: num, BlockTime: at, Amount0: big.NewInt(1), Amount1: big.NewInt(-1)})
			}
		}
		// Each writer sees the blocks in its own order.
		rand.Shuffle(len(txs), func(i, j int) { txs[i], txs[j] = txs[j], txs[i] })
		rand.Shuffle(len(sws), func(i, j int) { sws[i], sws[j] = sws[j], sws[i] })
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		for _, w := range []func() error{
			func() error { _, err := st.WriteTransactions(ctx, txs); return err },
			func() error { _, err := st.WriteTransfers(ctx, trs); return err },
			func() error { _, err := st.WriteSwaps(ctx, sws); return err },
		} {
			wg.Add(1)
			go func() { defer wg.Done(); errs <- w() }()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}

// Replicas writing the first transfers of a new month at the same moment both need its
// partitions; neither write may fail because the other created them first.
func TestConcurrentWritersOfANewMonth(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	reset(t, pool)
	const writers = 4
	for m := 0; m < 12; m++ {
		at := time.Date(2200, time.Month(m+1), 3, 0, 0, 0, 0, time.UTC)
		var wg sync.WaitGroup
		errs := make([]error, writers)
		start := make(chan struct{})
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st := newStore(pool) // each replica with its own cache of known partitions
				h := fmt.Sprintf("0x%060x%04x", m, w)
				row := store.TransferRow{Chain: "ethereum", ID: h + "_0", TxHash: h, BlockHash: fmt.Sprintf("0x%064x", m*10+w),
					BlockNumber: int64(m*10 + w), BlockTime: at, From: fmt.Sprintf("0x%040x", w+1), To: fmt.Sprintf("0x%040x", w+2),
					TokenID: "ethereum", TokenSymbol: "ETH", TokenDecimals: 18, Amount: big.NewInt(1), UnitValue: 1e-18}
				<-start
				_, errs[w] = st.WriteTransfers(ctx, []store.TransferRow{row})
			}()
		}
		close(start)
		wg.Wait()
		for w, err := range errs {
			if err != nil {
				t.Fatalf("month %d, writer %d: %v", m+1, w, err)
			}
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM transfers.transfers WHERE block_time >= '2200-01-01'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 12*writers {
		t.Fatalf("stored %d transfers, want %d", n, 12*writers)
	}
}

// A reorg handled while the orphaned block's transfers are being written (the two topics have
// consumers of their own) must still leave none of them: either the reorg waits for the write
// and removes its rows, or the write comes after and drops them. Rollups end exactly as if the
// orphaned blocks had never been written, and the two never fail each other (deadlock).
func TestReorgBesideAWriteOfItsBlock(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	reset(t, pool)
	st := newStore(pool)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	block := func(num int64, fork string) []store.TransferRow {
		bh := fmt.Sprintf("0x%s%062x", fork, num)
		at := t0.Add(time.Duration(num) * 12 * time.Second)
		var out []store.TransferRow
		for i := 0; i < 40; i++ {
			h := fmt.Sprintf("0x%s%058x%04x", fork, num, i)
			out = append(out, store.TransferRow{Chain: "ethereum", ID: h + "_0", TxHash: h, BlockHash: bh, BlockNumber: num, BlockTime: at,
				TxIndex: int32(i), From: fmt.Sprintf("0x%040x", i%7+1), To: fmt.Sprintf("0x%040x", i%5+100), TokenID: "ethereum",
				TokenSymbol: "ETH", TokenDecimals: 18, Amount: big.NewInt(int64(i + 1)), UnitValue: float64(i+1) * 1e-18})
		}
		return out
	}
	var kept []store.TransferRow
	for num := int64(1); num <= 30; num++ {
		orphan, canon := block(num, "aa"), block(num, "bb")
		// The orphaned block's write, its reorg and the next canonical write start together.
		var wg sync.WaitGroup
		errs := make([]error, 3)
		start := make(chan struct{})
		for i, f := range []func() error{
			func() error { _, err := st.WriteTransfers(ctx, orphan); return err },
			func() error {
				_, err := st.RemoveBlocks(ctx, "ethereum", []store.Block{{Number: num, Hash: orphan[0].BlockHash}}, nil)
				return err
			},
			func() error { _, err := st.WriteTransfers(ctx, canon); return err },
		} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = f()
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("block %d, step %d: %v", num, i, err)
			}
		}
		kept = append(kept, canon...)
	}
	var orphaned int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM transfers.transfers WHERE block_hash LIKE '0xaa%'`).Scan(&orphaned); err != nil {
		t.Fatal(err)
	}
	if orphaned > 0 {
		t.Fatalf("%d transfers of orphaned blocks survived their reorg", orphaned)
	}
	got := snapshot(t, pool)
	reset(t, pool)
	if _, err := newStore(pool).WriteTransfers(ctx, kept); err != nil {
		t.Fatal(err)
	}
	if want := snapshot(t, pool); got != want {
		t.Fatalf("rollups after racing reorgs differ from the canonical blocks written alone:\n%s\nwant\n%s", got, want)
	}
}
