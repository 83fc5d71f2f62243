package store

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/migrations"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// closeClock is the clock of the close tests: half past the hour.
var closeClock = time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)

func emptyFlows(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `TRUNCATE market.flows, market.orphaned_blocks, market.flow_hours,
		market.flow_days, market.flow_address_hours, market.address_classes, market.flow_marks,
		market.flow_address_versions`); err != nil {
		t.Fatal(err)
	}
}

// hourlyFlows are n transfers of chain in each hour of [from, to), each from a user to 0xhot or
// another user.
func hourlyFlows(chain string, from, to time.Time, n int) []app.Flow {
	var fs []app.Flow
	for h := from; h.Before(to); h = h.Add(time.Hour) {
		for i := range n {
			dst := fmt.Sprintf("0xu%d", i%7)
			if i%3 == 0 {
				dst = "0xhot"
			}
			fs = append(fs, app.Flow{Chain: chain, ID: fmt.Sprintf("0x%s%d_%d", chain, h.Unix(), i), ChainType: "evm",
				BlockHash: fmt.Sprintf("0xb%d", h.Unix()), Time: h.Add(time.Duration(i%25) * time.Minute), Token: "0xt",
				From: fmt.Sprintf("0xu%d", i%5), To: dst, Value: 1, USD: float64(1 + i%4)})
		}
	}
	return fs
}

// flowsRead is how many rows of market.flows the class change of cs reads (rows returned plus
// rows removed by filters and rechecks, over every loop), from EXPLAIN ANALYZE of the statement
// in a transaction rolled back.
func flowsRead(t *testing.T, pool *pgxpool.Pool, cs []app.ClassChange) float64 {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	c := cs[0]
	var plan []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+sqlClassesApply, []string{c.ChainType}, []string{c.Address},
		[]*string{&c.EntityType}, []bool{c.SetsEntity}, []bool{c.IsPool}, []int64{c.Version}, [][]byte{nil}, []string{""}, []string{}, []bool{false}).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	return rowsRead(t, plan, "flows")
}

// TestIdleChainClosesAndRelabelReadsOpenHoursPerChain has a chain that stopped delivering two
// days ago beside one delivering every hour up to the clock's: one close must move both chains'
// rolled_until to the clock's hour (the idle chain's newest hour closes too), and a relabel must
// read from market.flows only the open hours' rows, per chain, also while the idle chain's hours
// are still open (a chain whose close has not run): never the busy chain's closed hours.
func TestIdleChainClosesAndRelabelReadsOpenHoursPerChain(t *testing.T) {
	ctx := context.Background()
	pool, st, clockHour := closeWorld(t)
	idleFrom := clockHour.Add(-50 * time.Hour)
	idle := hourlyFlows("bsc", idleFrom, idleFrom.Add(2*time.Hour), 10)
	busy := hourlyFlows("ethereum", clockHour.Add(-36*time.Hour), clockHour.Add(time.Hour), 60)
	for _, batch := range [][]app.Flow{idle, busy} {
		if err := st.ApplyFlows(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.CloseHours(ctx); err != nil {
		t.Fatal(err)
	}
	var stale int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM market.flow_marks WHERE rolled_until <> $1`, clockHour).Scan(&stale); err != nil {
		t.Fatal(err)
	}
	if stale != 0 {
		t.Fatalf("%d chains' rolled_until is not the clock's hour %s after the close", stale, clockHour)
	}
	if _, err := pool.Exec(ctx, `ANALYZE market.flows`); err != nil {
		t.Fatal(err)
	}
	relabel := []app.ClassChange{{ChainType: "evm", Address: "0xhot", EntityType: "cex", SetsEntity: true, Version: 1}}
	openRows := func() float64 {
		var n float64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM market.flows f JOIN market.flow_marks k
			ON k.chain = f.chain AND f.hour >= k.rolled_until`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if read, open := flowsRead(t, pool, relabel), openRows(); read > open {
		t.Fatalf("the relabel read %v rows of market.flows; only %v are of open hours", read, open)
	}
	// The idle chain's hours open again, as before its close: its rows are read, the busy
	// chain's closed hours still not.
	if _, err := pool.Exec(ctx, `UPDATE market.flow_marks SET rolled_until = $1 WHERE chain = 'bsc'`, idleFrom); err != nil {
		t.Fatal(err)
	}
	if read, open := flowsRead(t, pool, relabel), openRows(); read > open || open != float64(len(idle)+60) {
		t.Fatalf("with the idle chain's hours open the relabel read %v rows of market.flows; %v are of open hours", read, open)
	}
	// And the relabel moves every transfer into 0xhot, of closed and open hours, to the CEX column.
	if err := st.ApplyClasses(ctx, relabel); err != nil {
		t.Fatal(err)
	}
	checkHotInflow(t, pool)
}

// TestCloseRebuildsRowsFromRolledUntil has rows in flow_address_hours from a chain's
// rolled_until on, as a replica of the previous model writes them during a rolling upgrade
// (per batch for every hour, and a reorg subtracting nothing from open hours): top_flow and a
// relabel must not count them next to the open hours' transfers, and the close must replace
// them by the rebuilt sums (the row of an address whose only transfer is orphaned by zeros)
// instead of failing, over a backlog of several transactions' hours. A chain whose close fails
// must not keep the other chains' hours open.
func TestCloseRebuildsRowsFromRolledUntil(t *testing.T) {
	ctx := context.Background()
	pool, st, clockHour := closeWorld(t)
	fs := hourlyFlows("ethereum", clockHour.Add(-8*time.Hour), clockHour.Add(time.Hour), 12)
	orphan := app.Flow{Chain: "ethereum", ID: "0xorph_0", ChainType: "evm", BlockHash: "0xorphaned",
		Time: clockHour.Add(-5 * time.Hour), Token: "0xt", From: "0xlost", To: "0xhot", Value: 1, USD: 50}
	broken := hourlyFlows("broken", clockHour.Add(-3*time.Hour), clockHour, 4)
	if err := st.ApplyFlows(ctx, append(append(fs, orphan), broken...)); err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyReorg(ctx, "ethereum", []string{"0xorphaned"}, nil); err != nil {
		t.Fatal(err)
	}
	// What a replica of the previous model leaves: the hours' per-address rows, the orphaned
	// copy's still counted.
	stray := `INSERT INTO market.flow_address_hours (chain, token, hour, address, chain_type, in_usd, in_value, out_usd, out_value)
		SELECT f.chain, f.token, f.hour, l.address, min(f.chain_type), sum(l.in_usd), sum(l.in_value), sum(l.out_usd), sum(l.out_value)
		FROM market.flows f
		CROSS JOIN LATERAL (VALUES (f.to_addr, f.usd, f.value, 0::float8, 0::float8), (f.from_addr, 0, 0, f.usd, f.value))
			AS l(address, in_usd, in_value, out_usd, out_value)
		WHERE f.chain = 'ethereum' AND f.hour >= $1
		GROUP BY 1, 2, 3, 4`
	if _, err := pool.Exec(ctx, stray, clockHour.Add(-6*time.Hour)); err != nil {
		t.Fatal(err)
	}
	deps := []app.Deployment{{Chain: "ethereum", Address: "0xt"}}
	topFlow := func(step string) {
		t.Helper()
		got, err := st.TopFlows(ctx, deps, clockHour.Add(-24*time.Hour), 100)
		if err != nil {
			t.Fatal(err)
		}
		var want []struct {
			addr    string
			in, out float64
		}
		rows, err := pool.Query(ctx, `SELECT address, sum(i), sum(o) FROM (
				SELECT to_addr AS address, usd AS i, 0 AS o FROM market.flows WHERE chain = 'ethereum' AND counted
				UNION ALL SELECT from_addr, 0, usd FROM market.flows WHERE chain = 'ethereum' AND counted) l
			GROUP BY 1 ORDER BY sum(i) + sum(o) DESC, 1`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var w struct {
				addr    string
				in, out float64
			}
			if err := rows.Scan(&w.addr, &w.in, &w.out); err != nil {
				t.Fatal(err)
			}
			want = append(want, w)
		}
		if len(got) < len(want) {
			t.Fatalf("%s: top_flow gave %d addresses, want %d", step, len(got), len(want))
		}
		for i, w := range want {
			if got[i].Address != w.addr || got[i].InUSD != w.in || got[i].OutUSD != w.out {
				t.Fatalf("%s: top_flow's #%d is %s in %v out %v, want %s in %v out %v", step, i, got[i].Address,
					got[i].InUSD, got[i].OutUSD, w.addr, w.in, w.out)
			}
		}
	}
	topFlow("rows from rolled_until on")
	if err := st.ApplyClasses(ctx, []app.ClassChange{{ChainType: "evm", Address: "0xhot", EntityType: "cex", SetsEntity: true, Version: 1}}); err != nil {
		t.Fatal(err)
	}
	// The close of chain "broken" fails; ethereum's must still be done.
	for _, q := range []string{
		`CREATE FUNCTION pg_temp.fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'broken chain'; END $$`,
		`CREATE TRIGGER close_fails BEFORE INSERT ON market.flow_address_hours FOR EACH ROW WHEN (NEW.chain = 'broken') EXECUTE FUNCTION pg_temp.fail()`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `DROP TRIGGER IF EXISTS close_fails ON market.flow_address_hours`)
	})
	if _, err := st.CloseHours(ctx); err == nil {
		t.Fatal("the close of chain broken did not fail")
	}
	var marks string
	if err := pool.QueryRow(ctx, `SELECT string_agg(chain || ' ' || coalesce(to_char(rolled_until AT TIME ZONE 'UTC', 'DD HH24'), rolled_until::text), ', ' ORDER BY chain)
		FROM market.flow_marks`).Scan(&marks); err != nil {
		t.Fatal(err)
	}
	if want := "broken -infinity, ethereum 10 12"; marks != want {
		t.Fatalf("marks after the close: %s, want %s", marks, want)
	}
	var bad int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM (
			SELECT a.token, a.hour, a.address, a.in_usd, a.in_value, a.out_usd, a.out_value FROM market.flow_address_hours a
			WHERE a.chain = 'ethereum' AND a.hour < $1 AND (a.in_usd, a.in_value, a.out_usd, a.out_value) <> (0, 0, 0, 0)
			EXCEPT
			SELECT f.token, f.hour, l.address, sum(l.in_usd), sum(l.in_value), sum(l.out_usd), sum(l.out_value)
			FROM market.flows f
			CROSS JOIN LATERAL (VALUES (f.to_addr, f.usd, f.value, 0::float8, 0::float8), (f.from_addr, 0, 0, f.usd, f.value))
				AS l(address, in_usd, in_value, out_usd, out_value)
			WHERE f.chain = 'ethereum' AND f.counted AND f.hour < $1
			GROUP BY 1, 2, 3) d`, clockHour).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Fatalf("%d rows of flow_address_hours are not the closed hours' sums", bad)
	}
	var orphaned string
	if err := pool.QueryRow(ctx, `SELECT string_agg(concat_ws(',', address, in_usd, out_usd), ';' ORDER BY address)
		FROM market.flow_address_hours WHERE hour = $1 AND address IN ('0xhot', '0xlost')`, orphan.Time.Truncate(time.Hour)).Scan(&orphaned); err != nil {
		t.Fatal(err)
	}
	if want := "0xhot,10,0;0xlost,0,0"; orphaned != want {
		t.Fatalf("the orphaned copy's hour: %s, want %s", orphaned, want)
	}
	topFlow("closed")
	checkHotInflow(t, pool)
}

// TestMigrationSeedsMarksAtMostAnHourAhead runs migration 00007's seed of market.flow_marks over
// a chain with a transfer claiming a time days ahead of the clock: its head must stop at the
// clock's next hour, as a transfer batch's does, not at the far hour.
func TestMigrationSeedsMarksAtMostAnHourAhead(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	emptyFlows(t, pool)
	b, err := fs.ReadFile(migrations.FS, "00007_flow_hour_close.sql")
	if err != nil {
		t.Fatal(err)
	}
	seed := regexp.MustCompile(`(?s)INSERT INTO market\.flow_marks .*?;`).Find(b)
	if seed == nil {
		t.Fatal("no seed of market.flow_marks in migration 00007")
	}
	if _, err := pool.Exec(ctx, `INSERT INTO market.flows (chain, id, chain_type, block, hour, token, from_addr, to_addr, value, usd, counted)
		VALUES ('ahead', '0x1_0', 'evm', '0xb', date_trunc('hour', now() + interval '3 days'), '0xt', '0xa', '0xb', 1, 1, true),
		       ('ahead', '0x2_0', 'evm', '0xb', date_trunc('hour', now() - interval '2 hours'), '0xt', '0xa', '0xb', 1, 1, true),
		       ('behind', '0x3_0', 'evm', '0xb', date_trunc('hour', now() - interval '5 hours'), '0xt', '0xa', '0xb', 1, 1, true)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, string(seed)); err != nil {
		t.Fatal(err)
	}
	var wrong int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM market.flow_marks m
		JOIN (VALUES ('ahead', date_trunc('hour', now() + interval '1 hour', 'UTC')), ('behind', date_trunc('hour', now() - interval '5 hours')))
			AS w(chain, head) ON w.chain = m.chain
		WHERE m.head <> w.head OR m.rolled_until <> w.head + interval '1 hour'`).Scan(&wrong); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 {
		t.Fatalf("%d chains' marks seeded past the clock's next hour or off their newest hour", wrong)
	}
}

// TestPruneMovesMarksToTheHorizon has a chain whose hours stayed open since before the flow
// horizon: pruning deletes those hours' copies, so it must move the chain's rolled_until to the
// horizon, leaving no close to build (or read) them.
func TestPruneMovesMarksToTheHorizon(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	emptyFlows(t, pool)
	st := New(pool, Retention(app.MinFlowRetention, func() time.Time { return closeClock }))
	horizon := st.FlowHorizon()
	if _, err := pool.Exec(ctx, `INSERT INTO market.flow_marks (chain, rolled_until, head)
		VALUES ('old', $1, $1), ('new', $2, $2)`, horizon.Add(-72*time.Hour), horizon.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.PruneFlows(ctx); err != nil {
		t.Fatal(err)
	}
	var wrong int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM market.flow_marks
		WHERE rolled_until <> CASE chain WHEN 'old' THEN $1::timestamptz ELSE $2::timestamptz END`, horizon, horizon.Add(time.Hour)).Scan(&wrong); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 {
		t.Fatalf("%d marks not at the horizon (or moved back) after pruning", wrong)
	}
}

// checkHotInflow fails unless flow_hours' CEX inflow is every counted transfer into 0xhot (the
// exchange address the tests' relabel makes).
func checkHotInflow(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	var moved, want float64
	if err := pool.QueryRow(context.Background(), `SELECT (SELECT sum(cex_in_usd) FROM market.flow_hours),
		(SELECT sum(usd) FROM market.flows WHERE to_addr = '0xhot' AND counted)`).Scan(&moved, &want); err != nil {
		t.Fatal(err)
	}
	if moved != want {
		t.Fatalf("cex inflow %v after the relabel, want %v", moved, want)
	}
}

// finishesOrWaits runs f and reports whether it finished (with its error) before waiting on a
// lock; when it waits, done delivers its error later.
func finishesOrWaits(t *testing.T, pool *pgxpool.Pool, f func() error) (finished bool, done <-chan error) {
	t.Helper()
	return finishesOrWaitsBeside(t, pool, 0, f)
}

// finishesOrWaitsBeside is finishesOrWaits while waiting sessions already wait on locks: f waits
// when more than that many do.
func finishesOrWaitsBeside(t *testing.T, pool *pgxpool.Pool, waiting int, f func() error) (finished bool, done <-chan error) {
	t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	for {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatal(err)
			}
			return true, ch
		default:
		}
		if lockWaiters(t, pool) > waiting {
			return false, ch
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lockWaiters is how many other sessions of the test database wait on a lock.
func lockWaiters(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCloseBuildsBesideWriters holds a close's build of the hours before the clock's open: a
// batch of the clock's hour must commit meanwhile, a late copy of a closing hour must wait for
// the build and then add itself to flow_address_hours, so the closed hours' rows are the sums of
// every counted copy, the late one included.
func TestCloseBuildsBesideWriters(t *testing.T) {
	ctx := context.Background()
	pool, st, clockHour := closeWorld(t)
	if err := st.ApplyFlows(ctx, hourlyFlows("ethereum", clockHour.Add(-2*time.Hour), clockHour.Add(time.Hour), 9)); err != nil {
		t.Fatal(err)
	}
	due, done, err := st.announceClose(ctx, "ethereum", closeClock, false)
	if err != nil || !due || !done {
		t.Fatalf("announcing the close: due %v, done %v, %v", due, done, err)
	}
	build := holdCloseLock(t, pool, "ethereum")
	current := []app.Flow{{Chain: "ethereum", ID: "0xcur_0", ChainType: "evm", BlockHash: "0xbcur", Time: clockHour.Add(20 * time.Minute),
		Token: "0xt", From: "0xu1", To: "0xhot", Value: 1, USD: 7}}
	if finished, _ := finishesOrWaits(t, pool, func() error { return st.ApplyFlows(ctx, current) }); !finished {
		t.Fatal("a batch of an open hour waited for the close")
	}
	late := []app.Flow{{Chain: "ethereum", ID: "0xlate_0", ChainType: "evm", BlockHash: "0xblate", Time: clockHour.Add(-90 * time.Minute),
		Token: "0xt", From: "0xu2", To: "0xhot", Value: 1, USD: 11}}
	finished, lateDone := finishesOrWaits(t, pool, func() error { return st.ApplyFlows(ctx, late) })
	if finished {
		t.Fatal("a late copy of a closing hour did not wait for the close")
	}
	if c := buildHours(t, build, [2]time.Time{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), clockHour}); c.Transfers != 18 {
		t.Fatalf("the build closed %d transfers, want the 18 stored before it", c.Transfers)
	}
	if err := <-lateDone; err != nil {
		t.Fatal(err)
	}
	checkClosedRows(t, pool, clockHour)
}

// checkClosedRows fails unless flow_address_hours holds exactly the sums of the counted copies of
// the hours before until (besides rows of zeros, which a copy leaving a closed hour leaves) and
// the chain's rolled_until is until.
func checkClosedRows(t *testing.T, pool *pgxpool.Pool, until time.Time) {
	t.Helper()
	ctx := context.Background()
	var bad, rolled int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM (
			(SELECT a.token, a.hour, a.address, a.in_usd, a.out_usd FROM market.flow_address_hours a
			WHERE (a.in_usd, a.out_usd) <> (0, 0)
			EXCEPT
			SELECT f.token, f.hour, l.address, sum(l.in_usd), sum(l.out_usd)
			FROM market.flows f
			CROSS JOIN LATERAL (VALUES (f.to_addr, f.usd, 0::float8), (f.from_addr, 0, f.usd)) AS l(address, in_usd, out_usd)
			WHERE f.counted AND f.hour < $1
			GROUP BY 1, 2, 3)
			UNION ALL
			(SELECT f.token, f.hour, l.address, sum(l.in_usd), sum(l.out_usd)
			FROM market.flows f
			CROSS JOIN LATERAL (VALUES (f.to_addr, f.usd, 0::float8), (f.from_addr, 0, f.usd)) AS l(address, in_usd, out_usd)
			WHERE f.counted AND f.hour < $1
			GROUP BY 1, 2, 3
			EXCEPT
			SELECT a.token, a.hour, a.address, a.in_usd, a.out_usd FROM market.flow_address_hours a)) d`, until).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM market.flow_marks WHERE rolled_until = $1`, until).Scan(&rolled); err != nil {
		t.Fatal(err)
	}
	if bad != 0 || rolled != 1 {
		t.Fatalf("%d rows of flow_address_hours differ from the closed hours' counted copies (rolled_until at the clock's hour: %d)", bad, rolled)
	}
}

// TestCloseHoldsReorgsAndRedeliveries holds a close's build open: a reorg of the chain and a
// redelivered batch (whose settling may move copies of the hours being built) must wait for it,
// and the closed hours' rows must then be the sums of the copies counted after both.
func TestCloseHoldsReorgsAndRedeliveries(t *testing.T) {
	ctx := context.Background()
	pool, st, clockHour := closeWorld(t)
	fs := hourlyFlows("ethereum", clockHour.Add(-2*time.Hour), clockHour.Add(time.Hour), 9)
	if err := st.ApplyFlows(ctx, fs); err != nil {
		t.Fatal(err)
	}
	if due, _, err := st.announceClose(ctx, "ethereum", closeClock, false); err != nil || !due {
		t.Fatalf("announcing the close: due %v, %v", due, err)
	}
	build := holdCloseLock(t, pool, "ethereum")
	orphaned := fs[0].BlockHash // a block of the first hour, being built
	finished, reorgDone := finishesOrWaits(t, pool, func() error { return st.ApplyReorg(ctx, "ethereum", []string{orphaned}, nil) })
	if finished {
		t.Fatal("a reorg of the chain did not wait for the close")
	}
	buildHours(t, build, [2]time.Time{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), clockHour})
	if err := <-reorgDone; err != nil {
		t.Fatal(err)
	}
	checkClosedRows(t, pool, clockHour)
	// A redelivery while the next hours' build is held.
	if _, err := pool.Exec(ctx, `UPDATE market.flow_marks SET rolled_until = $1, closing_until = $2`, clockHour.Add(-time.Hour), clockHour); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM market.flow_address_hours WHERE hour >= $1`, clockHour.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	build = holdCloseLock(t, pool, "ethereum")
	finished, redeliveryDone := finishesOrWaits(t, pool, func() error { return st.ApplyFlows(ctx, fs[len(fs)-1:]) })
	if finished {
		t.Fatal("a redelivered batch did not wait for the close")
	}
	buildHours(t, build, [2]time.Time{clockHour.Add(-time.Hour), clockHour})
	if err := <-redeliveryDone; err != nil {
		t.Fatal(err)
	}
	checkClosedRows(t, pool, clockHour)
}

// TestTwoReplicasCloseBesideWritersAndReorg runs CloseHours of one chain in two stores at once
// (two replicas) while the chain's close lock is held, so both have announced the same hours and
// wait to build them: a batch of the open hour must commit meanwhile, a reorg of the chain and a
// late copy of a closing hour must wait, and once the lock is free the hours must be built once
// (the second build re-reads the marks and finds them closed) and the closed rows be the sums of
// the copies counted after the reorg and the late copy.
func TestTwoReplicasCloseBesideWritersAndReorg(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	emptyFlows(t, pool)
	now := func() time.Time { return closeClock }
	st, other := New(pool, Retention(0, now)), New(pool, Retention(0, now))
	clockHour := closeClock.Truncate(time.Hour)
	fs := hourlyFlows("ethereum", clockHour.Add(-2*time.Hour), clockHour.Add(time.Hour), 9)
	if err := st.ApplyFlows(ctx, fs); err != nil {
		t.Fatal(err)
	}
	hold := holdCloseLock(t, pool, "ethereum")
	closes := make(chan Closed, 2)
	for _, s := range []*Store{st, other} {
		go func() {
			c, err := s.CloseHours(ctx)
			if err != nil {
				t.Error(err)
			}
			closes <- c
		}()
	}
	for lockWaiters(t, pool) < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	late, done := besideHeldCloses(t, pool, st, clockHour, fs[0].BlockHash)
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := <-closes, <-closes
	if min(a.Transfers, b.Transfers) != 0 || a.Transfers+b.Transfers != 18 {
		t.Fatalf("the two closes built %d and %d transfers, want the 18 of the closed hours built once", a.Transfers, b.Transfers)
	}
	for _, ch := range done {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	checkClosedRows(t, pool, clockHour)
	var counted bool
	if err := pool.QueryRow(ctx, `SELECT counted FROM market.flows WHERE id = $1`, late.ID).Scan(&counted); err != nil || !counted {
		t.Fatalf("the late copy is counted: %v (%v)", counted, err)
	}
}

// besideHeldCloses runs, while two closes of ethereum wait to build the hours before clockHour,
// a batch of clockHour (it must commit), a reorg orphaning block and a late copy of a closing
// hour (both must wait), and returns the late copy and the waiting ones' results.
func besideHeldCloses(t *testing.T, pool *pgxpool.Pool, st *Store, clockHour time.Time, block string) (app.Flow, []<-chan error) {
	t.Helper()
	ctx := context.Background()
	current := []app.Flow{{Chain: "ethereum", ID: "0xcur_0", ChainType: "evm", BlockHash: "0xbcur", Time: clockHour.Add(20 * time.Minute),
		Token: "0xt", From: "0xu1", To: "0xhot", Value: 1, USD: 7}}
	if finished, _ := finishesOrWaitsBeside(t, pool, 2, func() error { return st.ApplyFlows(ctx, current) }); !finished {
		t.Fatal("a batch of an open hour waited for the closes")
	}
	finished, reorgDone := finishesOrWaitsBeside(t, pool, 2, func() error { return st.ApplyReorg(ctx, "ethereum", []string{block}, nil) })
	if finished {
		t.Fatal("a reorg of the chain did not wait for the closes")
	}
	late := app.Flow{Chain: "ethereum", ID: "0xlate_0", ChainType: "evm", BlockHash: "0xblate", Time: clockHour.Add(-90 * time.Minute),
		Token: "0xt", From: "0xu2", To: "0xhot", Value: 1, USD: 11}
	finished, lateDone := finishesOrWaitsBeside(t, pool, 3, func() error { return st.ApplyFlows(ctx, []app.Flow{late}) })
	if finished {
		t.Fatal("a late copy of a closing hour did not wait for the closes")
	}
	return late, []<-chan error{reorgDone, lateDone}
}

// holdCloseLock begins a transaction holding chain's close lock, as a close's build does; it is
// rolled back at the end of the test unless committed before.
func holdCloseLock(t *testing.T, pool *pgxpool.Pool, chain string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, sqlFlowsCloseLock, chain); err != nil {
		t.Fatal(err)
	}
	return tx
}

// buildHours closes hours in the transaction holding the close lock and commits it.
func buildHours(t *testing.T, build pgx.Tx, hours [2]time.Time) Closed {
	t.Helper()
	ctx := context.Background()
	c, err := closeRange(ctx, build, "ethereum", hours)
	if err != nil {
		t.Fatal(err)
	}
	if err := build.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// closeWorld is an empty flows world with a store whose clock is closeClock, and closeClock's hour.
func closeWorld(t *testing.T) (*pgxpool.Pool, *Store, time.Time) {
	pool := pgtest.Pool(t)
	emptyFlows(t, pool)
	return pool, New(pool, Retention(0, func() time.Time { return closeClock })), closeClock.Truncate(time.Hour)
}

// ClosedUntil is every chain's rolled_until, without the chains none of whose hours was closed
// yet (rolled_until -infinity, a chain's mark as its first transfer writes it).
func TestClosedUntilLeavesOutChainsNeverClosed(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	emptyFlows(t, pool)
	until := closeClock.Truncate(time.Hour)
	if _, err := pool.Exec(ctx, `INSERT INTO market.flow_marks (chain, rolled_until, head)
		VALUES ('ethereum', $1, $1), ('bsc', '-infinity', $1)`, until); err != nil {
		t.Fatal(err)
	}
	got, err := New(pool).ClosedUntil(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got["ethereum"].Equal(until) {
		t.Errorf("closed until %v, want ethereum at %s only", got, until)
	}
}
