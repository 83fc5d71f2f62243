// Package store is the token-analytics service's PostgreSQL storage (schema market): the token
// registry, price history, flow rollups, address classes, reserve balances and the outbox of
// market.tokens.v1 / market.prices.v1 records written in the transaction of each change. Its SQL
// is in the embedded sql/*.sql files.
package store

import (
	"context"
	"embed"
	"fmt"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/outbox"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed sql/*.sql
var files embed.FS

func load(name string) string {
	b, err := files.ReadFile("sql/" + name + ".sql")
	if err != nil {
		panic(fmt.Sprintf("store: missing sql/%s.sql", name))
	}
	return strings.TrimSpace(string(b))
}

// Statements, read once from the embedded files.
var (
	sqlTokenUpsert      = load("token_upsert")
	sqlDeploymentUpsert = load("deployment_upsert")
	sqlTokensGet        = load("tokens_get")
	sqlTokensKnown      = load("tokens_known")
	sqlTokenPublished   = load("token_published")
	sqlDeploymentGet    = load("deployment_get")
	sqlPollIDs          = load("poll_ids")
	sqlPricesUpsert     = load("prices_upsert")
	sqlTokenQuote       = load("token_quote")
	sqlPriceLatestTime  = load("price_latest_time")
	sqlPriceAt          = load("price_at")
	sqlPriceInForce     = load("price_in_force")
	sqlPriceExtremes    = load("price_extremes")

	sqlPriceExtremesWiden     = load("price_extremes_widen")
	sqlPriceExtremesRecompute = load("price_extremes_recompute")

	sqlPricesLock       = load("prices_lock")
	sqlRepublishLock    = load("republish_lock")
	sqlRepublishedGet   = load("republished_get")
	sqlRepublishedSet   = load("republished_set")
	sqlRepublishIDs     = load("republish_ids")
	sqlRepublishPrices  = load("republish_prices")
	sqlPricesRange      = load("prices_range")
	sqlPricesWindow     = load("prices_window")
	sqlPriceHistory     = load("price_history")
	sqlFlowsChainLock   = load("flows_chain_lock")
	sqlFlowsSeen        = load("flows_seen")
	sqlFlowMarks        = load("flow_marks")
	sqlFlowMarksHead    = load("flow_marks_head")
	sqlFlowsClose       = load("flows_close") + "\n" + load("flows_close_end")
	sqlFlowsRebuild     = load("flows_close") + "\n" + load("flows_close_rebuild") + "\n" + load("flows_close_end")
	sqlFlowsCloseNext   = load("flows_close_next")
	sqlFlowMarksClosing = load("flow_marks_closing")
	sqlFlowsCloseLock   = load("flows_close_lock")
	sqlFlowsCloseShared = load("flows_close_lock_shared")
	sqlFlowsCloseTry    = load("flows_close_lock_shared_try")
	sqlFlowMarksPrune   = load("flow_marks_prune")
	sqlCloseWorkMem     = load("close_work_mem")
	sqlFlowsInsert      = load("flows_insert")
	sqlOrphansOf        = load("orphans_of")
	sqlClassesOf        = load("classes_of")
	sqlFlowsRollupFirst = load("flows_rollup_first") + "\n" + load("flows_rollup_hours")
	sqlFlowsSettleBatch = load("flows_keys_batch") + "\n" + load("flows_settle") + "\n" + load("flows_rollup_tail") + "\n" + load("flows_rollup_hours")
	sqlFlowsSettleBlock = load("flows_keys_blocks") + "\n" + load("flows_settle") + "\n" + load("flows_rollup_tail") + "\n" + load("flows_rollup_hours")
	sqlOrphansAdd       = load("orphans_add")
	sqlOrphansRemove    = load("orphans_remove")
	sqlClassesApply     = load("classes_apply")
	sqlEntityTypesApply = load("entity_types_apply")
	sqlDepositsStale    = load("deposit_services_stale")
	sqlLockShared       = load("lock_shared")
	sqlLockExclusive    = load("lock_exclusive")
	sqlTopWindows       = load("top_windows")
	sqlTopParts         = load("top_parts")
	sqlTopFlow          = load("top_flow")
	sqlTopFlowClosed    = load("top_flow_closed")
	sqlTopFlowOpen      = load("top_flow_open")
	sqlTopFlowInfo      = load("top_flow_info")
	sqlVolume           = load("volume")
	sqlTrending         = load("trending")
	sqlAltcoins         = load("altcoins")
	sqlReserveUpsert    = load("reserve_upsert")
	sqlReserveSum       = load("reserve_sum")
	sqlOutboxInsert     = load("outbox_insert")
	sqlPruneFlows       = load("prune_flows")
	sqlPruneRollups     = load("prune_rollups")

	sqlNetworkBlocksUpsert = load("network_blocks_upsert")
	sqlNetworkBlocksPrune  = load("network_blocks_prune")
	sqlNetworkStatus       = load("network_status")

	sqlLeaseTake    = load("lease_take")
	sqlLeaseRelease = load("lease_release")

	sqlPriceHistoryRecent  = load("price_history_recent")
	sqlPriceHistoryNewest  = load("price_history_newest")
	sqlPriceInForceTimes   = load("price_in_force_times")
	sqlPriceWindowExtremes = load("price_window_extremes")
	sqlPriceFirstTime      = load("price_first_time")
)

// Store is the market schema over a pgx pool. It is safe for concurrent use.
type Store struct {
	pool      *pgxpool.Pool
	changed   func() // called after a transaction that wrote outbox rows commits
	retention time.Duration
	now       func() time.Time
	tf        *topFlowKeep // nil: top_flow always runs top_flow.sql
	tfEvery   time.Duration
}

// Option tunes a Store.
type Option func(*Store)

// OnOutbox sets a function called (it must not block) after every committed transaction that
// wrote outbox rows, so the relay publishes them at once.
func OnOutbox(f func()) Option { return func(s *Store) { s.changed = f } }

// Retention keeps flows (transfer copies, natural ids and every rollup row) only from the flow
// horizon on: the UTC day of now() - d. ApplyFlows drops older transfers and PruneFlows deletes
// older rows, so a transfer redelivered after its rows were pruned is not counted again. 0 (the
// default) keeps everything.
func Retention(d time.Duration, now func() time.Time) Option {
	return func(s *Store) { s.retention, s.now = d, now }
}

// KeepTopFlows sets top_flow's kept sums (topflow_cache.go): the closed hours' per-address sums
// of a deployment set and window are kept when they hold at least minAddresses addresses, and
// at most budget addresses in all; minAddresses 0 keeps none (every request runs top_flow.sql).
func KeepTopFlows(minAddresses, budget int) Option {
	return func(s *Store) {
		s.tf = nil
		if minAddresses > 0 {
			s.tf = newTopFlowKeep(minAddresses, budget)
		}
	}
}

// TopFlowRebuildInterval sets how often at most a deployment set and window's kept sums are read
// (again): requests between answer from the sums kept, or from top_flow.sql when their closed
// rows changed. A failed read is not retried before the longer of d and a minute, doubled per
// failure in a row up to an hour. The service passes its close interval.
func TopFlowRebuildInterval(d time.Duration) Option { return func(s *Store) { s.tfEvery = d } }

// Default kept sums: sets whose closed hours of the window hold fewer addresses are answered by
// top_flow.sql in a few milliseconds; the budget bounds a replica's memory (about 160 bytes an
// address: its sums, key and index entry).
const (
	DefaultTopFlowMinAddresses = 1024
	DefaultTopFlowBudget       = 1_000_000
	// DefaultTopFlowRebuildInterval is the default close interval.
	DefaultTopFlowRebuildInterval = time.Minute
)

// New returns a store over pool.
func New(pool *pgxpool.Pool, opts ...Option) *Store {
	s := &Store{pool: pool, changed: func() {}, now: time.Now,
		tf: newTopFlowKeep(DefaultTopFlowMinAddresses, DefaultTopFlowBudget), tfEvery: DefaultTopFlowRebuildInterval}
	for _, o := range opts {
		o(s)
	}
	if s.tf != nil {
		s.tf.every, s.tf.read = s.tfEvery, s.buildKept
	}
	return s
}

// Pool is the store's pool (for tests and benchmarks that seed tables).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// write runs fn in a transaction and signals the relay when fn wrote outbox rows.
func (s *Store) write(ctx context.Context, what string, fn func(tx pgx.Tx) (events bool, err error)) error {
	return outbox.Write(ctx, s.pool, what, fn, s.changed)
}

// nullChains is chains as a query argument: NULL (every chain) when empty.
func nullChains(chains []string) any {
	if len(chains) == 0 {
		return nil
	}
	return chains
}
