package edge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/redisx"
	"github.com/chainintel/chainintel/services/edge/internal/keys"
	"github.com/chainintel/chainintel/services/edge/tiers"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// Account types for callers outside the edge (the admin command, tests of other services).
type (
	Org     = keys.Org
	User    = keys.User
	KeyInfo = keys.KeyInfo
	Tier    = tiers.Tier
)

// Errors of account administration.
var (
	ErrNotFound = keys.ErrNotFound
	ErrExists   = keys.ErrExists
)

// KeySpec describes a key to create. Empty fields are filled in: with no UserID a user is
// created (Email defaults to a random address, Role to org_admin); an org role with no OrgID
// creates an org named OrgName (default "org-<random>").
type KeySpec struct {
	OrgID   string
	OrgName string
	UserID  string
	Email   string
	Role    string
	Tier    string
	Name    string
}

// Admin administers accounts and keys: orgs, users, keys, tiers, revocation. Revokes and tier
// changes drop the cached verifications on every edge replica at once (through Redis).
type Admin struct {
	store *keys.Store
	pool  *pgxpool.Pool
	rdb   *redis.Client // nil: no Redis configured; cached verifications expire on their own
	tiers tiers.Table
}

// OpenAdmin connects to the edge's database (and Redis when cfg names one).
func OpenAdmin(ctx context.Context, cfg Config) (*Admin, error) {
	table, err := tiers.FromFile(cfg.TiersFile)
	if err != nil {
		return nil, err
	}
	pool, err := pgstore.Connect(ctx, cfg.DatabaseURL, pgstore.Options{MaxConns: 2, AppName: "edge-admin"})
	if err != nil {
		return nil, err
	}
	a := &Admin{store: keys.NewStore(pool), pool: pool, tiers: table}
	if cfg.Redis.URL != "" {
		if a.rdb, err = redisx.Connect(ctx, cfg.Redis.URL); err != nil {
			pool.Close()
			return nil, err
		}
	}
	return a, nil
}

// Close releases the connections.
func (a *Admin) Close() {
	a.pool.Close()
	if a.rdb != nil {
		_ = a.rdb.Close()
	}
}

// Tiers lists the tier table in force.
func (a *Admin) Tiers() []Tier {
	var out []Tier
	for _, n := range a.tiers.Names() {
		t, _ := a.tiers.Get(n)
		out = append(out, t)
	}
	return out
}

func (a *Admin) checkTier(name string) error {
	if _, ok := a.tiers.Get(name); !ok {
		return fmt.Errorf("tier %q is not in the tier table (have %v)", name, a.tiers.Names())
	}
	return nil
}

// CreateOrg creates an organisation.
func (a *Admin) CreateOrg(ctx context.Context, name string) (Org, error) {
	return a.store.CreateOrg(ctx, name)
}

// CreateUser creates a user of orgID (empty for an individual subscriber).
func (a *Admin) CreateUser(ctx context.Context, orgID, email, role string) (User, error) {
	return a.store.CreateUser(ctx, orgID, email, role)
}

// CreateKey creates a key (and the org and user it needs, per KeySpec) and returns the raw key,
// shown only now.
func (a *Admin) CreateKey(ctx context.Context, s KeySpec) (string, KeyInfo, error) {
	if err := a.checkTier(s.Tier); err != nil {
		return "", KeyInfo{}, err
	}
	if s.UserID == "" {
		if s.Role == "" {
			s.Role = httpx.RoleOrgAdmin
		}
		if !keys.ValidRole(s.Role) {
			return "", KeyInfo{}, fmt.Errorf("role %q: want org_admin, org_member or individual", s.Role)
		}
		if s.Email == "" {
			s.Email = "user-" + randomHex(6) + "@example.invalid"
		}
		if s.Role != httpx.RoleIndividual && s.OrgID == "" {
			if s.OrgName == "" {
				s.OrgName = "org-" + randomHex(4)
			}
			o, err := a.store.CreateOrg(ctx, s.OrgName)
			if err != nil {
				return "", KeyInfo{}, err
			}
			s.OrgID = o.ID
		}
		if s.Role == httpx.RoleIndividual {
			s.OrgID = ""
		}
		u, err := a.store.CreateUser(ctx, s.OrgID, s.Email, s.Role)
		if err != nil {
			return "", KeyInfo{}, err
		}
		s.UserID = u.ID
	}
	return a.store.CreateKey(ctx, s.UserID, s.Name, s.Tier)
}

// SetTier moves a key, or every key of an org, to tier.
func (a *Admin) SetTier(ctx context.Context, keyID, orgID, tier string) (int, error) {
	if err := a.checkTier(tier); err != nil {
		return 0, err
	}
	hashes, err := a.store.SetTier(ctx, keyID, orgID, tier)
	if err != nil {
		return 0, err
	}
	return len(hashes), a.invalidate(ctx, hashes...)
}

// Revoke revokes a key by id, or by its raw value when raw is set instead.
func (a *Admin) Revoke(ctx context.Context, keyID, raw string) error {
	if keyID == "" && raw == "" {
		return errors.New("revoke: name a key id or a raw key")
	}
	h, err := a.store.Revoke(ctx, keyID, keys.Hash(raw))
	if err != nil {
		return err
	}
	return a.invalidate(ctx, h)
}

// invalidate drops the keys' cached verifications on every edge. It fails, after the database
// change, whenever it cannot show that running edges heard it: no Redis configured, Redis
// unreachable, or no edge subscribed to invalidations on this Redis (an admin pointed at another
// Redis than the edges' would otherwise report success while the edges keep the key for up to
// EDGE_KEY_CACHE_TTL). The change is idempotent, so the fix is to run the command again with the
// edges' Redis.
func (a *Admin) invalidate(ctx context.Context, hashes ...[32]byte) error {
	const after = "; edges keep the old verification for up to EDGE_KEY_CACHE_TTL (60s by default): " +
		"set EDGE_REDIS_URL to the edges' Redis (the local stack prints it) and run the command again"
	if len(hashes) == 0 {
		return nil
	}
	if a.rdb == nil {
		return fmt.Errorf("%w: the database is updated but no Redis is configured%s", ErrEdgesNotNotified, after)
	}
	if err := keys.Invalidate(ctx, a.rdb, hashes...); err != nil {
		return fmt.Errorf("%w: the database is updated but %v%s", ErrEdgesNotNotified, err, after)
	}
	subs, err := a.rdb.PubSubNumSub(ctx, keys.InvalidateChannel).Result()
	if err != nil {
		return fmt.Errorf("%w: the database is updated but %v%s", ErrEdgesNotNotified, err, after)
	}
	if subs[keys.InvalidateChannel] == 0 {
		return fmt.Errorf("%w: the database is updated but no edge listens for invalidations on the Redis at %s "+
			"(if no edge is running, nothing is cached and the change holds)%s", ErrEdgesNotNotified, a.rdb.Options().Addr, after)
	}
	return nil
}

// ErrEdgesNotNotified: a revoke or tier change is in the database, but running edges may not
// have dropped their cached verifications.
var ErrEdgesNotNotified = errors.New("running edges were not told")

// ListOrgs lists organisations.
func (a *Admin) ListOrgs(ctx context.Context) ([]Org, error) { return a.store.ListOrgs(ctx) }

// ListUsers lists users (of one org when orgID is set).
func (a *Admin) ListUsers(ctx context.Context, orgID string) ([]User, error) {
	return a.store.ListUsers(ctx, orgID)
}

// ListKeys lists keys, filtered by org and user when set.
func (a *Admin) ListKeys(ctx context.Context, orgID, userID string) ([]KeyInfo, error) {
	return a.store.ListKeys(ctx, orgID, userID)
}

// CreateKey creates a key per spec in cfg's database and returns the raw key and its id. Tests
// of other services use it to get callers of their own.
func CreateKey(ctx context.Context, cfg Config, spec KeySpec) (raw, keyID string, err error) {
	a, err := OpenAdmin(ctx, cfg)
	if err != nil {
		return "", "", err
	}
	defer a.Close()
	raw, k, err := a.CreateKey(ctx, spec)
	if err != nil {
		return "", "", err
	}
	return raw, k.ID, nil
}

// RevokeKey revokes a key by id or raw value in cfg's database, dropping cached verifications
// through cfg's Redis when one is named.
func RevokeKey(ctx context.Context, cfg Config, keyID, raw string) error {
	a, err := OpenAdmin(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	return a.Revoke(ctx, keyID, raw)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
