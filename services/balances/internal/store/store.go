// Package store is the balances service's PostgreSQL storage (schema balances): observations,
// current balances, daily snapshots per address and per operator entity, token supply, the
// token registry, prices and attributions. Its statements are static SQL in sql/*.sql.
//
// Every write takes one transaction-scoped advisory lock (sql/lock.sql), so the consumers of
// observations, reorgs and attributions never interleave their updates of the snapshots.
// The observation pruner (PrunePass) takes no lock: it deletes only observations no writer
// reads again (docs/balances.md, Pruning observations).
package store

import (
	"context"
	"embed"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed sql/*.sql
var sqlFS embed.FS

// queries holds every statement by file name (without .sql).
var queries = func() map[string]string {
	m := map[string]string{}
	ents, err := sqlFS.ReadDir("sql")
	if err != nil {
		panic(err)
	}
	for _, e := range ents {
		b, err := sqlFS.ReadFile("sql/" + e.Name())
		if err != nil {
			panic(err)
		}
		m[strings.TrimSuffix(e.Name(), ".sql")] = string(b)
	}
	return m
}()

// q returns the statement named name; a missing one is a programming error caught by the tests.
func q(name string) string {
	s, ok := queries[name]
	if !ok {
		panic("balances store: no statement " + name)
	}
	return s
}

// Store is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	// rankingTimeout is read_entity_ranking's statement_timeout.
	rankingTimeout time.Duration
}

// DefaultRankingTimeout bounds the entity balance ranking's statement: its cost grows with
// every operator entity's tokens times the interval's days, and past this an answer is better
// refused (503) than left holding a connection of the pool.
const DefaultRankingTimeout = 5 * time.Second

// Option configures a Store at construction.
type Option func(*Store)

// WithRankingTimeout sets the statement_timeout of the entity balance ranking's read (at least
// a millisecond, PostgreSQL's unit).
func WithRankingTimeout(d time.Duration) Option {
	return func(s *Store) { s.rankingTimeout = max(d, time.Millisecond) }
}

// New returns a store over pool.
func New(pool *pgxpool.Pool, opts ...Option) *Store {
	s := &Store{pool: pool, rankingTimeout: DefaultRankingTimeout}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Pool is the store's pool (benchmarks and tests).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// write runs fn in a transaction holding the writers' lock.
func (s *Store) write(ctx context.Context, what string, fn func(tx pgx.Tx) error) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, name := range []string{"lock", "write_plans"} {
			if _, err := tx.Exec(ctx, q(name)); err != nil {
				return err
			}
		}
		return fn(tx)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// parseInt parses an exact integer PostgreSQL rendered as text.
func parseInt(s string) (*big.Int, error) {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Errorf("not an integer: %q", s)
	}
	return v, nil
}

// ChainType is the chain type of a chain name ("evm" for unknown names, like sql chain_type).
func ChainType(chain string) string {
	if c, ok := chains.Lookup(chain); ok {
		return string(c.Type)
	}
	return string(chains.TypeEVM)
}
