// Package keys issues, administers and verifies API keys. A key is random, shown once, and
// stored only as its SHA-256 hash with a short display prefix. Verification results are cached
// in process (briefly) and in Redis, and a revoke or tier change drops them everywhere at once
// through a Redis pub/sub channel.
package keys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrInvalid means the key is unknown or revoked.
var ErrInvalid = errors.New("error validating API key")

// MaxKeyLength bounds the API-Key header; longer values are refused without hashing.
const MaxKeyLength = 256

// Hash is the stored form of a key.
func Hash(raw string) [32]byte { return sha256.Sum256([]byte(raw)) }

// Generate returns a new random key and its display prefix.
func Generate() (raw, prefix string) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	raw = "ci_" + base64.RawURLEncoding.EncodeToString(b[:])
	return raw, DisplayPrefix(raw)
}

// DisplayPrefix is the part of a key shown in listings.
func DisplayPrefix(raw string) string {
	if len(raw) > 11 {
		return raw[:11]
	}
	return raw
}

// Store reads and writes accounts and keys in the edge schema.
type Store struct{ pool *pgxpool.Pool }

// NewStore returns a store over pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Lookup returns the identity of the active key with hash h, or ErrInvalid.
func (s *Store) Lookup(ctx context.Context, h [32]byte) (httpx.Identity, error) {
	var id httpx.Identity
	var org *string
	err := s.pool.QueryRow(ctx, `
		SELECT k.id::text, u.id::text, u.org_id::text, u.role, k.tier
		FROM edge.api_keys k JOIN edge.users u ON u.id = k.user_id
		WHERE k.key_hash = $1 AND k.revoked_at IS NULL`, h[:]).Scan(&id.KeyID, &id.UserID, &org, &id.Role, &id.Tier)
	if errors.Is(err, pgx.ErrNoRows) {
		return httpx.Identity{}, ErrInvalid
	}
	if err != nil {
		return httpx.Identity{}, fmt.Errorf("look up API key: %w", err)
	}
	if org != nil {
		id.OrgID = *org
	}
	return id, nil
}

// SeedDevKey makes raw a working key of an org admin on tier, creating the "dev" org and user
// when needed; a revoked raw is re-enabled. It is idempotent. With revokeEarlier, the dev
// user's other seeded keys (named "dev") are revoked: a stack seeding a new random key each
// start leaves only its own working.
func (s *Store) SeedDevKey(ctx context.Context, raw, tier string, revokeEarlier bool) (httpx.Identity, error) {
	h := Hash(raw)
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return httpx.Identity{}, err
	}
	defer tx.Rollback(ctx)
	var userID string
	err = tx.QueryRow(ctx, `SELECT id::text FROM edge.users WHERE email = 'dev@localhost'`).Scan(&userID)
	if errors.Is(err, pgx.ErrNoRows) {
		var orgID string
		if err := tx.QueryRow(ctx, `INSERT INTO edge.orgs (name) VALUES ('dev') RETURNING id::text`).Scan(&orgID); err != nil {
			return httpx.Identity{}, fmt.Errorf("create dev org: %w", err)
		}
		if err := tx.QueryRow(ctx, `INSERT INTO edge.users (org_id, email, role) VALUES ($1, 'dev@localhost', 'org_admin') RETURNING id::text`, orgID).Scan(&userID); err != nil {
			return httpx.Identity{}, fmt.Errorf("create dev user: %w", err)
		}
	} else if err != nil {
		return httpx.Identity{}, err
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO edge.api_keys (user_id, key_hash, prefix, name, tier) VALUES ($1, $2, $3, 'dev', $4)
		ON CONFLICT (key_hash) DO UPDATE SET revoked_at = NULL, tier = EXCLUDED.tier`,
		userID, h[:], DisplayPrefix(raw), tier)
	if err != nil {
		return httpx.Identity{}, fmt.Errorf("seed dev key: %w", err)
	}
	if revokeEarlier {
		if _, err := tx.Exec(ctx, `
			UPDATE edge.api_keys SET revoked_at = now()
			WHERE user_id = $1 AND name = 'dev' AND key_hash <> $2 AND revoked_at IS NULL`, userID, h[:]); err != nil {
			return httpx.Identity{}, fmt.Errorf("revoke earlier dev keys: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return httpx.Identity{}, err
	}
	return s.Lookup(ctx, h)
}
