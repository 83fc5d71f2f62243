package store

import (
	"context"
	_ "embed"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/jackc/pgx/v5"
)

// SweepCandidate is an address without an operator entity that sent to hot wallets of an
// exchange, with the figures deposit detection decides on.
type SweepCandidate struct {
	Chain, ChainType string
	Address          string
	Exchange         string // entity id of the hot wallets it sent to
	HotOut           int    // distinct hot wallets of Exchange it sent to
	OutDegree        int    // distinct addresses it sent to
	Senders          int    // distinct addresses that sent to it
}

// notWalletKeys are address.NotWallets as two arrays (chain types, addresses) for the queries.
var notWalletKeys = sync.OnceValues(func() ([]string, []string) {
	var types, addrs []string
	for _, n := range address.NotWallets() {
		types, addrs = append(types, string(n.Type)), append(addrs, n.Address)
	}
	return types, addrs
})

// SweepCandidates returns every unattributed, non-contract address that sent value to an
// address of an entity whose type is in exchangeTypes. The zero and burn addresses
// (address.NotWallet) are never candidates, and do not count among the addresses that sent to
// one: a mint is no one paying in (a treasury receiving mints stays excluded by the sender rule).
func (s *Store) SweepCandidates(ctx context.Context, exchangeTypes []string) ([]SweepCandidate, error) {
	nwTypes, nwAddrs := notWalletKeys()
	rows, err := s.pool.Query(ctx, `WITH hot AS (
			SELECT a.chain_type, a.address, a.entity_id FROM intel.addresses a JOIN intel.entities e ON e.id = a.entity_id
			WHERE e.type = ANY($1)),
		nw AS (SELECT * FROM unnest($2::text[], $3::text[]) AS nw(chain_type, address)),
		sw AS (
			SELECT ed.chain, ed.chain_type, ed.from_addr AS addr, h.entity_id, count(*) AS hot_out
			FROM intel.edges ed JOIN hot h ON h.chain_type = ed.chain_type AND h.address = ed.to_addr
			GROUP BY 1, 2, 3, 4)
		SELECT sw.chain, sw.chain_type, sw.addr, sw.entity_id, sw.hot_out,
			(SELECT count(*) FROM intel.edges o WHERE o.chain = sw.chain AND o.from_addr = sw.addr),
			(SELECT count(*) FROM intel.edges i WHERE i.chain = sw.chain AND i.to_addr = sw.addr
				AND NOT EXISTS (SELECT 1 FROM nw WHERE nw.chain_type = i.chain_type AND nw.address = i.from_addr))
		FROM sw
		WHERE NOT EXISTS (SELECT 1 FROM intel.addresses a WHERE a.chain_type = sw.chain_type AND a.address = sw.addr
			AND (a.entity_id IS NOT NULL OR a.is_contract))
			AND NOT EXISTS (SELECT 1 FROM nw WHERE nw.chain_type = sw.chain_type AND nw.address = sw.addr)
		ORDER BY sw.chain, sw.addr, sw.entity_id`, exchangeTypes, nwTypes, nwAddrs)
	if err != nil {
		return nil, fmt.Errorf("sweep candidates: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (SweepCandidate, error) {
		var c SweepCandidate
		err := r.Scan(&c.Chain, &c.ChainType, &c.Address, &c.Exchange, &c.HotOut, &c.OutDegree, &c.Senders)
		return c, err
	})
}

// Sender is an address that sent to a deposit address.
type Sender struct {
	Chain, ChainType string
	Deposit, Sender  string
	Attributed       bool // the sender has an operator entity or is a contract
}

// SendersOf returns the senders of the given (chain, address) pairs, except the zero and burn
// addresses (address.NotWallet): every mint comes from the zero address, which would otherwise
// join every deposit address that received a minted token into one cluster.
func (s *Store) SendersOf(ctx context.Context, chainsOf, addrs []string) ([]Sender, error) {
	nwTypes, nwAddrs := notWalletKeys()
	rows, err := s.pool.Query(ctx, `SELECT e.chain, e.chain_type, e.to_addr, e.from_addr,
			EXISTS (SELECT 1 FROM intel.addresses a WHERE a.chain_type = e.chain_type AND a.address = e.from_addr AND (a.entity_id IS NOT NULL OR a.is_contract))
		FROM unnest($1::text[], $2::text[]) AS k(chain, addr)
		JOIN intel.edges e ON e.chain = k.chain AND e.to_addr = k.addr
		WHERE NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[]) AS nw(chain_type, address)
			WHERE nw.chain_type = e.chain_type AND nw.address = e.from_addr)
		ORDER BY 1, 3, 4`, chainsOf, addrs, nwTypes, nwAddrs)
	if err != nil {
		return nil, fmt.Errorf("senders: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Sender, error) {
		var x Sender
		err := r.Scan(&x.Chain, &x.ChainType, &x.Deposit, &x.Sender, &x.Attributed)
		return x, err
	})
}

// HeuristicResult is what the heuristics conclude about one address.
type HeuristicResult struct {
	ChainType, Address string
	PredictedEntity    string
	DepositServiceID   string
	ClusterID          string
}

// SetHeuristicResults makes results the complete set of heuristic conclusions: addresses in it
// get their prediction, deposit service and cluster; addresses not in it lose theirs. Only
// changed addresses get a new version (and are republished).
func (s *Store) SetHeuristicResults(ctx context.Context, results []HeuristicResult) (int, error) {
	changed := 0
	err := s.inTx(ctx, true, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `CREATE TEMP TABLE heuristic_results (chain_type text, address text, predicted text, deposit text, cluster text) ON COMMIT DROP`); err != nil {
			return err
		}
		rows := make([][]any, len(results))
		for i, r := range results {
			rows[i] = []any{r.ChainType, r.Address, r.PredictedEntity, r.DepositServiceID, r.ClusterID}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"heuristic_results"}, []string{"chain_type", "address", "predicted", "deposit", "cluster"}, pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("load heuristic results: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE INDEX ON heuristic_results (chain_type, address)`); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO intel.addresses AS a (chain_type, address, predicted_entity_id, deposit_service_id, cluster_ids, version)
			SELECT DISTINCT ON (chain_type, address) chain_type, address, NULLIF(predicted, ''), NULLIF(deposit, ''),
				CASE WHEN cluster = '' THEN '{}'::text[] ELSE ARRAY[cluster] END, nextval('intel.attribution_version')
			FROM heuristic_results ORDER BY chain_type, address
			ON CONFLICT (chain_type, address) DO UPDATE SET predicted_entity_id = excluded.predicted_entity_id,
				deposit_service_id = excluded.deposit_service_id, cluster_ids = excluded.cluster_ids, version = excluded.version, updated_at = now()
			WHERE (a.predicted_entity_id, a.deposit_service_id, a.cluster_ids) IS DISTINCT FROM
				(excluded.predicted_entity_id, excluded.deposit_service_id, excluded.cluster_ids)`)
		if err != nil {
			return fmt.Errorf("apply heuristic results: %w", err)
		}
		changed += int(tag.RowsAffected())
		tag, err = tx.Exec(ctx, `UPDATE intel.addresses a SET predicted_entity_id = NULL, deposit_service_id = NULL, cluster_ids = '{}',
				version = nextval('intel.attribution_version'), updated_at = now()
			WHERE (a.predicted_entity_id IS NOT NULL OR a.deposit_service_id IS NOT NULL OR a.cluster_ids <> '{}')
				AND NOT EXISTS (SELECT 1 FROM heuristic_results h WHERE h.chain_type = a.chain_type AND h.address = a.address)`)
		if err != nil {
			return fmt.Errorf("clear stale heuristic results: %w", err)
		}
		changed += int(tag.RowsAffected())
		return nil
	})
	return changed, err
}

// PruneEdges drops transfer pairs last seen more than retentionMs before the newest one of
// their chain.
func (s *Store) PruneEdges(ctx context.Context, retentionMs int64) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM intel.edges e USING (SELECT chain, max(last_ms) AS newest FROM intel.edges GROUP BY chain) m
		WHERE e.chain = m.chain AND e.last_ms < m.newest - $1`, retentionMs)
	if err != nil {
		return 0, fmt.Errorf("prune edges: %w", err)
	}
	return tag.RowsAffected(), nil
}

// HeldBalance is one kept balance of a predicted address.
type HeldBalance struct {
	ChainType, Address string
	Chain, Token       string
	TokenID            string
	Decimals           int
	Balance            *big.Int
}

// PredictedBalances returns the kept balances of the addresses predicted to belong to entityID,
// and the addresses without any (with a nil Balance).
func (s *Store) PredictedBalances(ctx context.Context, entityID string) ([]HeldBalance, error) {
	rows, err := s.pool.Query(ctx, `SELECT a.chain_type, a.address, COALESCE(b.chain, ''), COALESCE(b.token_address, ''), COALESCE(b.token_id, ''),
			COALESCE(b.decimals, 0), b.balance::text
		FROM intel.addresses a
		LEFT JOIN intel.balances b ON b.address = a.address
		WHERE a.predicted_entity_id = $1`, entityID)
	if err != nil {
		return nil, fmt.Errorf("balances of predictions for %s: %w", entityID, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (HeldBalance, error) {
		var h HeldBalance
		var bal *string
		if err := r.Scan(&h.ChainType, &h.Address, &h.Chain, &h.Token, &h.TokenID, &h.Decimals, &bal); err != nil {
			return h, err
		}
		if bal != nil {
			h.Balance, _ = new(big.Int).SetString(*bal, 10)
		}
		return h, nil
	})
}

// heuristicsLock is the advisory lock a heuristics pass holds, so that of several replicas (and
// `intelligence heuristics`) one makes a pass at a time: every pass recomputes the same
// conclusions, and each holds versionLock while it writes them, which the consumers' attribution
// writes wait for.
const heuristicsLock = 0x696e74656c68 // "intelh"

//go:embed sql/heuristics_pass_claim.sql
var heuristicsPassClaimSQL string

//go:embed sql/heuristics_pass_record.sql
var heuristicsPassRecordSQL string

// TryHeuristicsPass gives runner the turn to make a heuristics pass unless another session
// holds the heuristics lock, or another runner's pass started less than every ago
// (sql/heuristics_pass_claim.sql); ok false means skip the round (nothing to finish). every 0
// claims whenever the lock is free.
//
// The lock is held in a transaction left open on a connection of its own, not as a session
// lock, so that it also works through a transaction-mode PgBouncer (docs/kubernetes.md,
// PostgreSQL connections): the transaction pins its server connection, and its end, or the
// connection's, releases the lock. The transaction only reads until finish: finish(true)
// records the pass's start (sql/heuristics_pass_record.sql) and commits, finish(false) rolls
// back, so a failed pass leaves the previous record and another replica retries once that is
// an interval old. finish ends the transaction and returns the connection (once; later calls
// do nothing).
func (s *Store) TryHeuristicsPass(ctx context.Context, runner string, every time.Duration) (finish func(completed bool), ok bool, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("heuristics lock: %w", err)
	}
	var started time.Time
	end := func(commit bool) {
		// Not the pass's context: it may have ended, and the lock must go either way (a failed
		// statement, commit or rollback closes the connection, or the rollback ends the
		// transaction).
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if commit {
			if _, err := tx.Exec(ctx, heuristicsPassRecordSQL, runner, started); err == nil {
				_ = tx.Commit(ctx)
			}
		}
		_ = tx.Rollback(ctx)
	}
	if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", int64(heuristicsLock)).Scan(&ok); err != nil || !ok {
		end(false)
		if err != nil {
			return nil, false, fmt.Errorf("heuristics lock: %w", err)
		}
		return nil, false, nil
	}
	if err := tx.QueryRow(ctx, heuristicsPassClaimSQL, runner, every).Scan(&started, &ok); err != nil || !ok {
		end(false)
		if err != nil {
			return nil, false, fmt.Errorf("heuristics pass claim: %w", err)
		}
		return nil, false, nil
	}
	var once sync.Once
	return func(completed bool) { once.Do(func() { end(completed) }) }, true, nil
}
