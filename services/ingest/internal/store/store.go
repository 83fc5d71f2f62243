// Package store is the ingest schema: per-chain cursors, recent block hashes for reorg
// detection, the block hashes published as orphaned, balances to re-read after a reorg, and
// the token-metadata and pool caches.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store reads and writes the ingest schema. It is safe for concurrent use.
type Store struct{ pool *pgxpool.Pool }

// New returns a store over pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Cursor is the last block whose events Kafka acknowledged.
type Cursor struct {
	Number uint64
	Hash   string
}

// Pair is an (address, token) whose balance a block changed; Token is "" for the native coin.
type Pair struct{ Address, Token string }

// Block is a recent block as ingest saw it.
type Block struct {
	Number     uint64
	Hash       string
	ParentHash string
	Touched    []Pair
}

// Token is cached token metadata.
type Token struct {
	Address         string
	Name, Symbol    string
	Decimals        int32
	NonStandard     bool
	DiscoveredBlock uint64
}

// Pool is a cached pool token pair.
type Pool struct {
	Address, Token0, Token1 string
	OK                      bool
}

// Cursor returns the chain's cursor; ok is false before the first commit.
func (s *Store) Cursor(ctx context.Context, chain string) (c Cursor, ok bool, err error) {
	var n int64
	err = s.pool.QueryRow(ctx, `SELECT block_number, block_hash FROM ingest.cursors WHERE chain = $1`, chain).Scan(&n, &c.Hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return Cursor{}, false, nil
	}
	if err != nil {
		return Cursor{}, false, fmt.Errorf("read cursor of %s: %w", chain, err)
	}
	c.Number = uint64(n)
	return c, true, nil
}

// Blocks returns the stored blocks numbered from..to, in order.
func (s *Store) Blocks(ctx context.Context, chain string, from, to uint64) ([]Block, error) {
	rows, err := s.pool.Query(ctx, `SELECT block_number, block_hash, parent_hash, touched FROM ingest.blocks
		WHERE chain = $1 AND block_number BETWEEN $2 AND $3 ORDER BY block_number`, chain, int64(from), int64(to))
	if err != nil {
		return nil, fmt.Errorf("read blocks of %s: %w", chain, err)
	}
	defer rows.Close()
	var out []Block
	for rows.Next() {
		var b Block
		var n int64
		var touched []string
		if err := rows.Scan(&n, &b.Hash, &b.ParentHash, &touched); err != nil {
			return nil, fmt.Errorf("read blocks of %s: %w", chain, err)
		}
		b.Number = uint64(n)
		b.Touched = decodePairs(touched)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read blocks of %s: %w", chain, err)
	}
	return out, nil
}

// OldestBlock returns the lowest stored block number; ok is false when none is stored.
func (s *Store) OldestBlock(ctx context.Context, chain string) (n uint64, ok bool, err error) {
	var v *int64
	if err := s.pool.QueryRow(ctx, `SELECT min(block_number) FROM ingest.blocks WHERE chain = $1`, chain).Scan(&v); err != nil {
		return 0, false, fmt.Errorf("read oldest block of %s: %w", chain, err)
	}
	if v == nil {
		return 0, false, nil
	}
	return uint64(*v), true, nil
}

// SaveBlocks records blocks about to be published (replacing rows of the same numbers).
func (s *Store) SaveBlocks(ctx context.Context, chain string, blocks []Block) error {
	b := &pgx.Batch{}
	for _, bl := range blocks {
		b.Queue(`INSERT INTO ingest.blocks (chain, block_number, block_hash, parent_hash, touched) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (chain, block_number) DO UPDATE SET block_hash = excluded.block_hash, parent_hash = excluded.parent_hash,
			touched = excluded.touched`, chain, int64(bl.Number), bl.Hash, bl.ParentHash, encodePairs(bl.Touched))
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("save blocks of %s: %w", chain, err)
	}
	return nil
}

// ErrCursorMoved says the cursor is no longer the one a round started from: another ingester of
// the chain moved it (see Lock), and the round's write is refused.
var ErrCursorMoved = errors.New("the cursor moved under this round: another ingester of the chain is running")

// moveCursor sets the chain's cursor to c if it is still from (nil: the chain had no cursor), so
// that of two ingesters that ever run at once the stale one's round fails instead of
// overwriting the other's position.
func moveCursor(ctx context.Context, tx pgx.Tx, chain string, from *Cursor, c Cursor) error {
	var tag pgconn.CommandTag
	var err error
	if from == nil {
		tag, err = tx.Exec(ctx, `INSERT INTO ingest.cursors (chain, block_number, block_hash) VALUES ($1, $2, $3) ON CONFLICT (chain) DO NOTHING`,
			chain, int64(c.Number), c.Hash)
	} else {
		tag, err = tx.Exec(ctx, `UPDATE ingest.cursors SET block_number = $2, block_hash = $3, updated_at = now()
			WHERE chain = $1 AND block_number = $4 AND block_hash = $5`, chain, int64(c.Number), c.Hash, int64(from.Number), from.Hash)
	}
	if err != nil {
		return fmt.Errorf("move the cursor of %s: %w", chain, err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("move the cursor of %s to block %d: %w", chain, c.Number, ErrCursorMoved)
	}
	return nil
}

// Commit moves the cursor from `from` (nil: none yet) after Kafka acknowledged a range's events:
// it stores the cursor and the newly published tokens, forgets blocks below pruneBelow, forgets
// the orphaned hashes of blocks stored at or below the cursor (named canonical again by the
// round) or below pruneBelow, and clears the re-read list, in one transaction.
func (s *Store) Commit(ctx context.Context, chain string, from *Cursor, c Cursor, tokens []Token, pruneBelow uint64) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := moveCursor(ctx, tx, chain, from, c); err != nil {
			return err
		}
		for _, t := range tokens {
			if _, err := tx.Exec(ctx, `INSERT INTO ingest.tokens (chain, address, name, symbol, decimals, non_standard, discovered_block)
				VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (chain, address) DO NOTHING`,
				chain, t.Address, t.Name, t.Symbol, t.Decimals, t.NonStandard, int64(t.DiscoveredBlock)); err != nil {
				return fmt.Errorf("save token %s of %s: %w", t.Address, chain, err)
			}
		}
		// The orphaned hashes the round named canonical again (stored at or below the new
		// cursor) are done with, and so are those below the window.
		if _, err := tx.Exec(ctx, `DELETE FROM ingest.orphaned o WHERE o.chain = $1 AND (o.block_number < $2 OR EXISTS (
			SELECT 1 FROM ingest.blocks b WHERE b.chain = o.chain AND b.block_number = o.block_number AND b.block_hash = o.block_hash
			AND b.block_number <= $3))`, chain, int64(pruneBelow), int64(c.Number)); err != nil {
			return fmt.Errorf("forget orphaned blocks of %s: %w", chain, err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM ingest.blocks WHERE chain = $1 AND block_number < $2`, chain, int64(pruneBelow)); err != nil {
			return fmt.Errorf("prune blocks of %s: %w", chain, err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM ingest.rebalance WHERE chain = $1`, chain); err != nil {
			return fmt.Errorf("clear re-reads of %s: %w", chain, err)
		}
		return nil
	})
}

// Rewind moves the cursor back from `from` to a reorg's common ancestor: blocks above it are
// forgotten and the balances they touched are queued for re-reading.
func (s *Store) Rewind(ctx context.Context, chain string, from, ancestor Cursor, reread []Pair) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM ingest.blocks WHERE chain = $1 AND block_number > $2`, chain, int64(ancestor.Number)); err != nil {
			return fmt.Errorf("rewind blocks of %s: %w", chain, err)
		}
		if err := moveCursor(ctx, tx, chain, &from, ancestor); err != nil {
			return err
		}
		for _, p := range reread {
			if _, err := tx.Exec(ctx, `INSERT INTO ingest.rebalance (chain, address, token) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
				chain, p.Address, p.Token); err != nil {
				return fmt.Errorf("queue re-read of %s: %w", chain, err)
			}
		}
		return nil
	})
}

// Orphan is a block hash published as orphaned that ingest stores again as a block it ingests:
// the chain went back to it.
type Orphan struct {
	Block
	Seq int64 // which orphaning of the hash it was
}

// RecordOrphans remembers block hashes about to be published as orphaned.
func (s *Store) RecordOrphans(ctx context.Context, chain string, blocks []Block) error {
	b := &pgx.Batch{}
	for _, bl := range blocks {
		b.Queue(`INSERT INTO ingest.orphaned (chain, block_number, block_hash) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			chain, int64(bl.Number), bl.Hash)
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("record orphaned blocks of %s: %w", chain, err)
	}
	return nil
}

// OrphanedAgain lists, in block order, the stored blocks numbered up to to whose hash was
// published as orphaned and not named canonical since.
func (s *Store) OrphanedAgain(ctx context.Context, chain string, to uint64) ([]Orphan, error) {
	rows, err := s.pool.Query(ctx, `SELECT b.block_number, b.block_hash, b.parent_hash, o.seq FROM ingest.blocks b
		JOIN ingest.orphaned o ON o.chain = b.chain AND o.block_number = b.block_number AND o.block_hash = b.block_hash
		WHERE b.chain = $1 AND b.block_number <= $2 ORDER BY b.block_number`, chain, int64(to))
	if err != nil {
		return nil, fmt.Errorf("read blocks orphaned again of %s: %w", chain, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Orphan, error) {
		var o Orphan
		var n int64
		err := r.Scan(&n, &o.Hash, &o.ParentHash, &o.Seq)
		o.Number = uint64(n)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("read blocks orphaned again of %s: %w", chain, err)
	}
	return out, nil
}

// Rebalance lists the balances queued for re-reading.
func (s *Store) Rebalance(ctx context.Context, chain string) ([]Pair, error) {
	rows, err := s.pool.Query(ctx, `SELECT address, token FROM ingest.rebalance WHERE chain = $1 ORDER BY address, token`, chain)
	if err != nil {
		return nil, fmt.Errorf("read re-reads of %s: %w", chain, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Pair, error) {
		var p Pair
		err := r.Scan(&p.Address, &p.Token)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("read re-reads of %s: %w", chain, err)
	}
	return out, nil
}

// Tokens returns the cached metadata of those addresses that have any.
func (s *Store) Tokens(ctx context.Context, chain string, addrs []string) (map[string]Token, error) {
	out := make(map[string]Token, len(addrs))
	if len(addrs) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT address, name, symbol, decimals, non_standard, discovered_block FROM ingest.tokens
		WHERE chain = $1 AND address = ANY($2)`, chain, addrs)
	if err != nil {
		return nil, fmt.Errorf("read tokens of %s: %w", chain, err)
	}
	defer rows.Close()
	for rows.Next() {
		var t Token
		var n int64
		if err := rows.Scan(&t.Address, &t.Name, &t.Symbol, &t.Decimals, &t.NonStandard, &n); err != nil {
			return nil, fmt.Errorf("read tokens of %s: %w", chain, err)
		}
		t.DiscoveredBlock = uint64(n)
		out[t.Address] = t
	}
	return out, rows.Err()
}

// Pools returns the cached token pairs of those pools that have one.
func (s *Store) Pools(ctx context.Context, chain string, addrs []string) (map[string]Pool, error) {
	out := make(map[string]Pool, len(addrs))
	if len(addrs) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT address, token0, token1, ok FROM ingest.pools WHERE chain = $1 AND address = ANY($2)`, chain, addrs)
	if err != nil {
		return nil, fmt.Errorf("read pools of %s: %w", chain, err)
	}
	defer rows.Close()
	for rows.Next() {
		var p Pool
		if err := rows.Scan(&p.Address, &p.Token0, &p.Token1, &p.OK); err != nil {
			return nil, fmt.Errorf("read pools of %s: %w", chain, err)
		}
		out[p.Address] = p
	}
	return out, rows.Err()
}

// SavePools caches pool token pairs.
func (s *Store) SavePools(ctx context.Context, chain string, pools []Pool) error {
	b := &pgx.Batch{}
	for _, p := range pools {
		b.Queue(`INSERT INTO ingest.pools (chain, address, token0, token1, ok) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (chain, address) DO NOTHING`, chain, p.Address, p.Token0, p.Token1, p.OK)
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("save pools of %s: %w", chain, err)
	}
	return nil
}

func encodePairs(ps []Pair) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Address + "|" + p.Token
	}
	return out
}

func decodePairs(ss []string) []Pair {
	out := make([]Pair, 0, len(ss))
	for _, s := range ss {
		a, t, _ := strings.Cut(s, "|")
		out = append(out, Pair{a, t})
	}
	return out
}

// SimState returns the saved state (JSON) of the simulated world named world; ok is false
// before its first save.
func (s *Store) SimState(ctx context.Context, world string) (state []byte, ok bool, err error) {
	err = s.pool.QueryRow(ctx, `SELECT state FROM ingest.sim_state WHERE world = $1`, world).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the state of simulated world %s: %w", world, err)
	}
	return state, true, nil
}

// SaveSimState records the state (JSON) of the simulated world named world.
func (s *Store) SaveSimState(ctx context.Context, world string, state []byte) error {
	if _, err := s.pool.Exec(ctx, `INSERT INTO ingest.sim_state (world, state) VALUES ($1, $2)
		ON CONFLICT (world) DO UPDATE SET state = excluded.state, updated_at = now()`, world, state); err != nil {
		return fmt.Errorf("save the state of simulated world %s: %w", world, err)
	}
	return nil
}

// Lock is a chain's ingester lock: a session advisory lock held on a connection of its own, so
// that two ingesters of one chain (a Deployment's replacement pod started while the old one
// still runs on an unreachable node, a mistaken scale-up) never index at once.
type Lock struct {
	conn *pgxpool.Conn
	key  string
}

// lockCheckTimeout bounds a check or release of the lock's session, so a server that stopped
// answering (a network partition) does not hold the indexer: the lock is then taken as lost.
const lockCheckTimeout = 10 * time.Second

// TryLock takes the chain's ingester lock; ok is false when another session holds it.
func (s *Store) TryLock(ctx context.Context, chain string) (l *Lock, ok bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", chain, err)
	}
	key := "chainintel.ingest:" + chain
	// The server's keepalives on this session find a holder that vanished (its node lost, its
	// network cut) in about a minute instead of the operating system's two hours, so the lock
	// is released for a standby ingester that soon.
	if _, err := conn.Exec(ctx, `SELECT set_config('tcp_keepalives_idle', '30', false), set_config('tcp_keepalives_interval', '10', false),
		set_config('tcp_keepalives_count', '3', false)`); err != nil {
		conn.Release()
		return nil, false, fmt.Errorf("lock %s: keepalives: %w", chain, err)
	}
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, key).Scan(&ok); err != nil || !ok {
		conn.Release()
		if err != nil {
			return nil, false, fmt.Errorf("lock %s: %w", chain, err)
		}
		return nil, false, nil
	}
	return &Lock{conn: conn, key: key}, true, nil
}

// Held reports, by a round trip on the lock's session, whether the lock is still held: an error
// means the session may be gone, and the lock with it.
func (l *Lock) Held(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, lockCheckTimeout)
	defer cancel()
	if err := l.conn.Ping(ctx); err != nil {
		return fmt.Errorf("the ingester lock's session: %w", err)
	}
	return nil
}

// Release gives the lock up (a broken session has already lost it: its connection is closed).
func (l *Lock) Release(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, lockCheckTimeout)
	defer cancel()
	if _, err := l.conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, l.key); err != nil {
		_ = l.conn.Conn().Close(ctx)
	}
	l.conn.Release()
}
