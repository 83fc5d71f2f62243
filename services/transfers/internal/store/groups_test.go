package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/transfers/internal/events"
	"github.com/chainintel/chainintel/services/transfers/internal/store"
	tw "github.com/chainintel/chainintel/services/transfers/internal/testworld"
	"github.com/jackc/pgx/v5/pgxpool"
)

// relabels move addresses between groups: U2 (only predicted) becomes coinbase's, H1 moves from
// binance to coinbase, the fund becomes a binance deposit address, D3 is deleted, D2 gets a
// stale version that must be ignored.
func relabels() []*eventsv1.Attribution {
	return []*eventsv1.Attribution{
		tw.Attribution(tw.U2, tw.Coinbase, "Customer", "", false, 2),
		tw.Attribution(tw.H1, tw.Coinbase, "Hot Wallet 1", "", false, 2),
		tw.Attribution(tw.F, tw.A16z, "", "binance", false, 2),
		tw.Attribution(tw.D2, tw.Coinbase, "", "", false, 0),
		{}, // D3's tombstone
	}
}

func relabelMsgs() []eventbus.Message[*eventsv1.Attribution] {
	ms := tw.Msgs(relabels())
	ms[len(ms)-1].Tombstone, ms[len(ms)-1].Key = true, eventsv1.AttributionKey("evm", tw.D3)
	return ms
}

// finalAttributions is the world's attributions after relabels, as one would load them fresh.
func finalAttributions() []*eventsv1.Attribution {
	var out []*eventsv1.Attribution
	for _, a := range tw.Attributions() {
		switch a.Address {
		case tw.D3:
			continue
		case tw.U2, tw.H1, tw.F:
			for _, r := range relabels() {
				if r.Address == a.Address {
					a = r
				}
			}
		}
		out = append(out, a)
	}
	return out
}

func loadChain(t *testing.T, h events.Handlers) {
	t.Helper()
	ctx := context.Background()
	if err := h.Transactions(ctx, tw.Msgs(tw.Transactions())); err != nil {
		t.Fatal(err)
	}
	if err := h.Transfers(ctx, tw.Msgs(tw.Transfers())); err != nil {
		t.Fatal(err)
	}
	if err := h.Swaps(ctx, tw.Msgs(tw.Swaps())); err != nil {
		t.Fatal(err)
	}
}

// groupRows renders the group rollups only (the snapshot's sections after groups).
func groupRows(t *testing.T, pool *pgxpool.Pool) string {
	return strings.Join(strings.Split(snapshot(t, pool), "--\n")[8:], "--\n")
}

// A relabel re-aggregates exactly the moved addresses' contributions: the state after loading
// the world and relabelling equals the state of loading the relabelled world directly, whether
// attributions came before the chain data or after; redelivering the relabels changes nothing.
func TestRelabelIsExact(t *testing.T) { testRelabelIsExact(t) }

func testRelabelIsExact(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	for _, min := range []int{0, 2} {
		t.Run(fmt.Sprintf("groups above %d addresses live", min), func(t *testing.T) {
			defer func(m int) { groupMin = m }(groupMin)
			groupMin = min

			// Expected: the relabelled world loaded directly.
			reset(t, pool)
			h, _ := handlers(pool)
			if err := h.Attributions(ctx, tw.Msgs(finalAttributions())); err != nil {
				t.Fatal(err)
			}
			loadChain(t, h)
			want := snapshot(t, pool)
			if !strings.Contains(want, "e:coinbase|3|true") {
				t.Fatalf("coinbase group not as expected:\n%s", want)
			}

			for _, order := range []string{"attributions first", "chain data first", "chain data around the relabel"} {
				t.Run(order, func(t *testing.T) {
					reset(t, pool)
					h, _ := handlers(pool)
					if order == "chain data first" {
						loadChain(t, h)
					}
					if err := h.Attributions(ctx, tw.Msgs(tw.Attributions())); err != nil {
						t.Fatal(err)
					}
					switch order {
					case "attributions first":
						loadChain(t, h)
					case "chain data around the relabel":
						// The same writer before and after: the groups it cached must not outlive
						// the relabel.
						trs := tw.Transfers()
						if err := h.Transfers(ctx, tw.Msgs(trs[:5])); err != nil {
							t.Fatal(err)
						}
						if err := h.Attributions(ctx, relabelMsgs()); err != nil {
							t.Fatal(err)
						}
						if err := h.Transfers(ctx, tw.Msgs(trs[5:])); err != nil {
							t.Fatal(err)
						}
						if err := h.Transactions(ctx, tw.Msgs(tw.Transactions())); err != nil {
							t.Fatal(err)
						}
						if err := h.Swaps(ctx, tw.Msgs(tw.Swaps())); err != nil {
							t.Fatal(err)
						}
					}
					before := snapshot(t, pool)
					for i := 0; i < 2; i++ { // redelivered
						if err := h.Attributions(ctx, relabelMsgs()); err != nil {
							t.Fatal(err)
						}
					}
					got := snapshot(t, pool)
					switch {
					case order == "chain data around the relabel" && got != before:
						// The relabel already happened mid-stream: redelivering it changes nothing.
						t.Fatalf("redelivered relabel changed the state:\n%s\nbefore:\n%s", got, before)
					case order != "chain data around the relabel" && got == before:
						t.Fatal("relabel changed nothing")
					}
					if got != want {
						t.Fatalf("after relabel:\n%s\nwant (relabelled world loaded directly):\n%s", got, want)
					}
				})
			}
		})
	}
}

// A group becomes live when it grows past the threshold and is built from the pair rollup;
// rebuilding every group from scratch (Rematerialize) finds exactly what was maintained.
func TestGroupsGrowLiveAndRebuild(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	defer func(m int) { groupMin = m }(groupMin)
	groupMin = 2
	reset(t, pool)
	h, st := handlers(pool)
	if err := tw.Load(ctx, h); err != nil {
		t.Fatal(err)
	}
	s := snapshot(t, pool)
	if !strings.Contains(s, "e:binance|3|true") || !strings.Contains(s, "e:coinbase|2|false") || !strings.Contains(s, "t:cex|5|true") {
		t.Fatalf("groups:\n%s", s)
	}
	if strings.Contains(groupRows(t, pool), "e:coinbase|2026") {
		t.Fatalf("coinbase has rollups before it is live:\n%s", s)
	}
	// U2 joins coinbase: three addresses, live, built from the pairs of all three.
	if err := h.Attributions(ctx, tw.Msgs([]*eventsv1.Attribution{tw.Attribution(tw.U2, tw.Coinbase, "", "", false, 2)})); err != nil {
		t.Fatal(err)
	}
	grown := snapshot(t, pool)
	if !strings.Contains(grown, "e:coinbase|3|true") || !strings.Contains(grown, "e:coinbase|2026-01-02 09:00:00 +0000 UTC|ethereum||ethereum|1|") {
		t.Fatalf("coinbase after growing:\n%s", grown)
	}
	if err := st.Rematerialize(ctx); err != nil {
		t.Fatal(err)
	}
	if again := snapshot(t, pool); again != grown {
		t.Fatalf("rebuilt from scratch:\n%s\nmaintained:\n%s", again, grown)
	}
	// The same with a threshold nothing reaches: no group live, no group rollups.
	if err := newStore(pool, withGroupMin(1000)).Rematerialize(ctx); err != nil {
		t.Fatal(err)
	}
	if rows := groupRows(t, pool); strings.Trim(rows, "-\n") != "" {
		t.Fatalf("group rollups without live groups:\n%s", rows)
	}
	// And back: Reconcile builds what grew past a lowered threshold.
	if err := newStore(pool, withGroupMin(2)).Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if again := snapshot(t, pool); again != grown {
		t.Fatalf("reconciled:\n%s\nmaintained:\n%s", again, grown)
	}
	// A type group turning live while entity groups already are: U1 and the pool join the fund, whose
	// type now has three addresses. The pair rows binance and coinbase already keep name it as
	// their counterparties' type, as a rebuild from scratch does.
	if strings.Contains(grown, "|t:fund|") || strings.Contains(grown, "|t:fund\n") {
		t.Fatalf("fund type on pair rows before it is live:\n%s", grown)
	}
	if err := h.Attributions(ctx, tw.Msgs([]*eventsv1.Attribution{
		tw.Attribution(tw.U1, tw.A16z, "", "", false, 3), tw.Attribution(tw.P, tw.A16z, "", "", true, 3)})); err != nil {
		t.Fatal(err)
	}
	funded := snapshot(t, pool)
	typed := func(line string) bool {
		return strings.HasPrefix(line, "e:binance|2026-01-01 10:00:00 +0000 UTC|"+tw.U1+"|"+tw.D1+"|") && strings.HasSuffix(line, "|t:fund|t:cex|")
	}
	if !strings.Contains(funded, "t:fund|3|true") || !slices.ContainsFunc(strings.Split(funded, "\n"), typed) {
		t.Fatalf("after the fund type turned live:\n%s", funded)
	}
	if err := st.Rematerialize(ctx); err != nil {
		t.Fatal(err)
	}
	if again := snapshot(t, pool); again != funded {
		t.Fatalf("rebuilt from scratch:\n%s\nmaintained:\n%s", again, funded)
	}
}

// The writer's natural id is the one the migration computes in SQL.
func TestTransferUIDMatchesSQL(t *testing.T) {
	pool := pgtest.Pool(t)
	for _, r := range rows(t, tw.Transfers()) {
		var sql [16]byte
		if err := pool.QueryRow(context.Background(), `SELECT transfers.transfer_uid($1, $2, $3, $4)`, r.TxHash, r.Chain, r.ID, r.BlockHash).Scan(&sql); err != nil {
			t.Fatal(err)
		}
		if got := store.TransferUID(r.TxHash, r.Chain, r.ID, r.BlockHash); got != sql {
			t.Fatalf("%s: Go %x, SQL %x", r.ID, got, sql)
		}
	}
}
