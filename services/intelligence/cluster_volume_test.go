package intelligence

import (
	"context"
	"fmt"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
	"github.com/chainintel/chainintel/services/intelligence/internal/events"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// A cluster summary counts each transfer touching its members once: a customer's payment into
// its deposit address (both members) once, not once out and once in; a transfer to or from a
// non-member (another cluster's member too) once. The same events delivered twice change
// nothing, and a heuristics pass changing the members changes the figure at the next read. Both
// reads of sql/cluster_activity.sql count: cust has as many outgoing pairs as clA has members at
// first (its pairs probed per member), fewer once clA or clB has three (its pairs read).
func TestClusterVolumeCountsEachTransferOnce(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := store.New(pool)
	h := events.Handlers{Store: st}
	const clA, clB = "cl-00000000000000a1", "cl-00000000000000b1"
	cust, dep, x, hot, y := addr(0xc1), addr(0xd1), addr(0x51), addr(0x77), addr(0xb1)
	tr := func(id, from, to string, ms int64, v float64) *eventsv1.Transfer {
		return &eventsv1.Transfer{Id: id, Chain: "ethereum", BlockHash: "0xb1", From: from, To: to, BlockTimeMs: ms, HistoricalUsd: usd(v), Amount: "1"}
	}
	transfers := []*eventsv1.Transfer{
		tr("a", cust, dep, 1000, 100), // customer into its deposit address: inside clA
		tr("b", dep, hot, 2000, 90),   // the sweep to a non-member
		tr("c", x, cust, 3000, 10),    // from a non-member
		tr("d", cust, cust, 4000, 5),  // an address to itself
		tr("e", cust, y, 5000, 7),     // to clB's member
	}
	cluster := func(members map[string]string) {
		t.Helper()
		for a, id := range members {
			_, err := pool.Exec(ctx, `INSERT INTO intel.addresses (chain_type, address, cluster_ids, version)
				VALUES ('evm', $1, ARRAY[$2], nextval('intel.attribution_version'))
				ON CONFLICT (chain_type, address) DO UPDATE SET cluster_ids = EXCLUDED.cluster_ids, version = EXCLUDED.version`, a, id)
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	api := newTestAPI(t, nil, nil)
	caller := &httpx.Identity{KeyID: "k1", UserID: "u1", Role: httpx.RoleIndividual, Tier: "api"}
	summary := func() string {
		t.Helper()
		var out string
		for _, id := range []string{clA, clB} {
			code, body := api.do(t, "GET", "/cluster/"+id+"/summary", "", caller)
			if code != 200 {
				t.Fatalf("summary of %s: %d %s", id, code, body)
			}
			ca, err := st.ClusterActivity(ctx, id, app.DefaultClusterMaxMembers)
			if err != nil {
				t.Fatal(err)
			}
			out += fmt.Sprintf("%s transfers=%d\n", compact(body), ca.TransferCount)
		}
		return out
	}
	line := func(id string, n int, volume float64, first, last string, transfers int) string {
		return fmt.Sprintf(`{"clusterId":"%s","numAddresses":%d,"volumeUsd":%v,"balanceUsd":0,"firstTx":"%s","lastTx":"%s"} transfers=%d`+"\n",
			id, n, volume, first, last, transfers)
	}
	const t1, t3, t5 = "1970-01-01T00:00:01Z", "1970-01-01T00:00:03Z", "1970-01-01T00:00:05Z"
	// clA (cust, dep): a, b, c, d, e = 212 in 5 transfers (the per-address sum was 312 in 6);
	// clB (y, a second address without activity): e.
	want := line(clA, 2, 212, t1, t5, 5) + line(clB, 2, 7, t5, t5, 1)

	for _, clusteredFirst := range []bool{true, false} {
		resetDB(t)
		members := map[string]string{cust: clA, dep: clA, y: clB, addr(0xb2): clB}
		if clusteredFirst {
			cluster(members)
		}
		for range 2 {
			if err := h.Transfers(ctx, msgs(eventsv1.TopicTransfers, transfers...)); err != nil {
				t.Fatal(err)
			}
		}
		if !clusteredFirst {
			cluster(members)
		}
		if got := summary(); got != want {
			t.Fatalf("clustered first %v:\n got %s\nwant %s", clusteredFirst, got, want)
		}
	}

	// A pass adding x to clA makes c internal: the same transfers, counted once, over 3 members.
	cluster(map[string]string{x: clA})
	if got, want := summary(), line(clA, 3, 212, t1, t5, 5)+line(clB, 2, 7, t5, t5, 1); got != want {
		t.Fatalf("x joined clA:\n got %s\nwant %s", got, want)
	}
	// A pass moving cust to clB: a and e leave clA's inside and enter clB's.
	cluster(map[string]string{cust: clB})
	// clA (dep, x): a, b, c = 200 in 3; clB (cust, y, ...): a, c, d, e = 122 in 4.
	if got, want := summary(), line(clA, 2, 200, t1, t3, 3)+line(clB, 3, 122, t1, t5, 4); got != want {
		t.Fatalf("cust moved to clB:\n got %s\nwant %s", got, want)
	}
}

// A cluster summary covers clusters of at most ClusterMaxMembers members: a larger cluster's
// summary is a 400 naming id and the limit, not a sum over some of its members; one at the limit
// is summed whole.
func TestClusterSummaryMemberCap(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	pool := pgtest.Pool(t)
	const small, large = "cl-00000000000000a2", "cl-00000000000000b2"
	if _, err := pool.Exec(ctx, `INSERT INTO intel.addresses (chain_type, address, cluster_ids, version)
		SELECT 'evm', '0x' || lpad(to_hex(g), 40, '0'), ARRAY[CASE WHEN g <= 2 THEN $1 ELSE $2 END], g FROM generate_series(1, 5) g;
		`, small, large); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO intel.address_activity (chain_type, address, volume_usd, transfer_count, first_ms, last_ms)
		SELECT 'evm', '0x' || lpad(to_hex(g), 40, '0'), 10, 1, 1000, 2000 FROM generate_series(1, 5) g`); err != nil {
		t.Fatal(err)
	}
	api := newTestAPI(t, nil, nil)
	api.app.ClusterMaxMembers = 2
	caller := &httpx.Identity{KeyID: "k1", UserID: "u1", Role: httpx.RoleIndividual, Tier: "api"}
	for _, c := range []struct {
		id   string
		code int
		body string
	}{
		{small, 200, `{"clusterId":"` + small + `","numAddresses":2,"volumeUsd":20,"balanceUsd":0,"firstTx":"1970-01-01T00:00:01Z","lastTx":"1970-01-01T00:00:02Z"}`},
		{large, 400, `{"error":"id: cluster ` + large + ` has more than 2 members; a summary covers clusters of at most 2 members"}`},
	} {
		code, body := api.do(t, "GET", "/cluster/"+c.id+"/summary", "", caller)
		if code != c.code || compact(body) != c.body {
			t.Fatalf("%s: %d %s\nwant %d %s", c.id, code, body, c.code, c.body)
		}
	}
}
