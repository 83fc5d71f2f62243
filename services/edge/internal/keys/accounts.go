package keys

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/jackc/pgx/v5"
)

// Errors of account administration.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
)

// Org is an organisation.
type Org struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// User is an org admin, an org member or an individual subscriber.
type User struct {
	ID        string    `json:"id"`
	OrgID     string    `json:"orgId,omitempty"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"createdAt"`
}

// KeyInfo describes a key without its secret.
type KeyInfo struct {
	ID        string     `json:"id"`
	UserID    string     `json:"userId"`
	OrgID     string     `json:"orgId,omitempty"`
	Email     string     `json:"email"`
	Role      string     `json:"role"`
	Prefix    string     `json:"prefix"`
	Name      string     `json:"name"`
	Tier      string     `json:"tier"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// ValidRole reports whether role is one of the three user roles.
func ValidRole(role string) bool {
	return role == httpx.RoleOrgAdmin || role == httpx.RoleOrgMember || role == httpx.RoleIndividual
}

// CreateOrg creates an organisation.
func (s *Store) CreateOrg(ctx context.Context, name string) (Org, error) {
	var o Org
	err := s.pool.QueryRow(ctx, `INSERT INTO edge.orgs (name) VALUES ($1) RETURNING id::text, name, created_at`, name).
		Scan(&o.ID, &o.Name, &o.CreatedAt)
	if err != nil {
		return Org{}, fmt.Errorf("create org %q: %w", name, err)
	}
	return o, nil
}

// CreateUser creates a user; orgID must be empty exactly for individuals.
func (s *Store) CreateUser(ctx context.Context, orgID, email, role string) (User, error) {
	if !ValidRole(role) {
		return User{}, fmt.Errorf("role %q: want org_admin, org_member or individual", role)
	}
	if (role == httpx.RoleIndividual) != (orgID == "") {
		return User{}, fmt.Errorf("role %s: an individual has no org; org admins and members need one", role)
	}
	var org *string
	if orgID != "" {
		org = &orgID
	}
	var u User
	var gotOrg *string
	err := s.pool.QueryRow(ctx, `INSERT INTO edge.users (org_id, email, role) VALUES ($1::uuid, $2, $3)
		RETURNING id::text, org_id::text, email, role, created_at`, org, email, role).
		Scan(&u.ID, &gotOrg, &u.Email, &u.Role, &u.CreatedAt)
	switch {
	case pgstore.IsUniqueViolation(err):
		return User{}, fmt.Errorf("user %s: %w", email, ErrExists)
	case pgstore.IsForeignKeyViolation(err), pgstore.IsCode(err, "22P02"):
		return User{}, fmt.Errorf("org %s: %w", orgID, ErrNotFound)
	case err != nil:
		return User{}, fmt.Errorf("create user %s: %w", email, err)
	}
	if gotOrg != nil {
		u.OrgID = *gotOrg
	}
	return u, nil
}

// CreateKey issues a new key for a user and returns it with the raw secret, which is not
// stored and cannot be shown again.
func (s *Store) CreateKey(ctx context.Context, userID, name, tier string) (raw string, k KeyInfo, err error) {
	raw, prefix := Generate()
	h := Hash(raw)
	var org *string
	err = s.pool.QueryRow(ctx, `
		WITH k AS (
			INSERT INTO edge.api_keys (user_id, key_hash, prefix, name, tier) VALUES ($1::uuid, $2, $3, $4, $5)
			RETURNING id, user_id, prefix, name, tier, created_at)
		SELECT k.id::text, k.user_id::text, u.org_id::text, u.email, u.role, k.prefix, k.name, k.tier, k.created_at
		FROM k JOIN edge.users u ON u.id = k.user_id`, userID, h[:], prefix, name, tier).
		Scan(&k.ID, &k.UserID, &org, &k.Email, &k.Role, &k.Prefix, &k.Name, &k.Tier, &k.CreatedAt)
	switch {
	case pgstore.IsForeignKeyViolation(err), pgstore.IsCode(err, "22P02"):
		return "", KeyInfo{}, fmt.Errorf("user %s: %w", userID, ErrNotFound)
	case err != nil:
		return "", KeyInfo{}, fmt.Errorf("create key: %w", err)
	}
	if org != nil {
		k.OrgID = *org
	}
	return raw, k, nil
}

// SetTier moves a key (keyID) or every key of an org (orgID) to tier and returns the hashes of
// the keys changed, whose cached verifications must be dropped.
func (s *Store) SetTier(ctx context.Context, keyID, orgID, tier string) ([][32]byte, error) {
	var rows pgx.Rows
	var err error
	switch {
	case keyID != "":
		rows, err = s.pool.Query(ctx, `UPDATE edge.api_keys SET tier = $2 WHERE id::text = $1 RETURNING key_hash`, keyID, tier)
	case orgID != "":
		rows, err = s.pool.Query(ctx, `UPDATE edge.api_keys k SET tier = $2 FROM edge.users u
			WHERE u.id = k.user_id AND u.org_id::text = $1 RETURNING k.key_hash`, orgID, tier)
	default:
		return nil, errors.New("set tier: name a key or an org")
	}
	if err != nil {
		return nil, fmt.Errorf("set tier: %w", err)
	}
	hashes, err := scanHashes(rows)
	if err != nil {
		return nil, fmt.Errorf("set tier: %w", err)
	}
	if len(hashes) == 0 {
		return nil, fmt.Errorf("set tier: %w", ErrNotFound)
	}
	return hashes, nil
}

// Revoke revokes the key with id keyID (or, when keyID is empty, the key whose hash is h) and
// returns its hash. Revoking a revoked key is not an error.
func (s *Store) Revoke(ctx context.Context, keyID string, h [32]byte) ([32]byte, error) {
	var rows pgx.Rows
	var err error
	if keyID != "" {
		rows, err = s.pool.Query(ctx, `UPDATE edge.api_keys SET revoked_at = coalesce(revoked_at, now())
			WHERE id::text = $1 RETURNING key_hash`, keyID)
	} else {
		rows, err = s.pool.Query(ctx, `UPDATE edge.api_keys SET revoked_at = coalesce(revoked_at, now())
			WHERE key_hash = $1 RETURNING key_hash`, h[:])
	}
	if err != nil {
		return [32]byte{}, fmt.Errorf("revoke key: %w", err)
	}
	hashes, err := scanHashes(rows)
	if err != nil {
		return [32]byte{}, fmt.Errorf("revoke key: %w", err)
	}
	if len(hashes) == 0 {
		return [32]byte{}, fmt.Errorf("revoke key %s: %w", keyID, ErrNotFound)
	}
	return hashes[0], nil
}

func scanHashes(rows pgx.Rows) ([][32]byte, error) {
	var out [][32]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			rows.Close()
			return nil, err
		}
		var h [32]byte
		copy(h[:], b)
		out = append(out, h)
	}
	return out, rows.Err()
}

// ListOrgs lists organisations, oldest first.
func (s *Store) ListOrgs(ctx context.Context) ([]Org, error) {
	rows, err := s.pool.Query(ctx, `SELECT id::text, name, created_at FROM edge.orgs ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list orgs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Org, error) {
		var o Org
		return o, r.Scan(&o.ID, &o.Name, &o.CreatedAt)
	})
	if err != nil {
		return nil, fmt.Errorf("list orgs: %w", err)
	}
	return out, nil
}

// ListUsers lists users, of one org when orgID is set.
func (s *Store) ListUsers(ctx context.Context, orgID string) ([]User, error) {
	rows, err := s.pool.Query(ctx, `SELECT id::text, coalesce(org_id::text, ''), email, role, created_at FROM edge.users
		WHERE $1 = '' OR org_id::text = $1 ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (User, error) {
		var u User
		return u, r.Scan(&u.ID, &u.OrgID, &u.Email, &u.Role, &u.CreatedAt)
	})
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// ListKeys lists keys (never their secrets), filtered by org and/or user when set.
func (s *Store) ListKeys(ctx context.Context, orgID, userID string) ([]KeyInfo, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT k.id::text, k.user_id::text, coalesce(u.org_id::text, ''), u.email, u.role, k.prefix, k.name, k.tier, k.created_at, k.revoked_at
		FROM edge.api_keys k JOIN edge.users u ON u.id = k.user_id
		WHERE ($1 = '' OR u.org_id::text = $1) AND ($2 = '' OR u.id::text = $2)
		ORDER BY k.created_at, k.id`, orgID, userID)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (KeyInfo, error) {
		var k KeyInfo
		return k, r.Scan(&k.ID, &k.UserID, &k.OrgID, &k.Email, &k.Role, &k.Prefix, &k.Name, &k.Tier, &k.CreatedAt, &k.RevokedAt)
	})
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return out, nil
}
