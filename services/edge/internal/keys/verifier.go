package keys

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/redisx"
	"github.com/chainintel/chainintel/services/edge/internal/cache"
	"github.com/chainintel/chainintel/services/edge/keyevents"
	"github.com/redis/go-redis/v9"
)

// Redis names used by the verification cache, under a namespace (DefaultNamespace unless
// VerifierOptions.Namespace says otherwise; tests pass their own, since pub/sub channels are
// shared by every database of a server).
const (
	// DefaultNamespace prefixes the cache's keys and channel.
	DefaultNamespace = "edge:"
	redisKeyPrefix   = "key:"
	// InvalidateChannel (under the namespace) carries the hex hashes of keys whose cached
	// verification must be dropped.
	InvalidateChannel = keyevents.DefaultChannel
	invalidateName    = "keys:invalidate"
	// tombstoneSuffix names, after a key's entry, the mark an invalidation leaves so that a
	// lookup that read the database before the revoke does not write its answer back after it.
	tombstoneSuffix = ":inv"
	// lookupTimeout bounds one verification's lookup (Redis read, database, write-back).
	lookupTimeout = 5 * time.Second
	// tombstoneTTL outlives any lookup under way when the invalidation lands, with margin.
	tombstoneTTL = 2 * lookupTimeout
)

// storeUnlessInvalidated writes a lookup's answer (KEYS[1] = ARGV[1], PX ARGV[2]) unless the key
// was invalidated since (its tombstone KEYS[2] exists): the answer may predate the revoke.
var storeUnlessInvalidated = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

// Channel is the invalidation channel of namespace ("" is DefaultNamespace).
func Channel(namespace string) string {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	return namespace + invalidateName
}

func keyName(namespace, hx string) string {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	return namespace + redisKeyPrefix + hx
}

// Lookuper resolves a key hash to its identity (ErrInvalid when unknown or revoked).
type Lookuper interface {
	Lookup(ctx context.Context, h [32]byte) (httpx.Identity, error)
}

// VerifierOptions tune a Verifier.
type VerifierOptions struct {
	// LocalTTL bounds how long a result stays in process without being re-read from Redis; it
	// is the backstop when an invalidation message is lost (default 1s).
	LocalTTL time.Duration
	// RedisTTL is how long a valid key stays cached in Redis (default 60s).
	RedisTTL time.Duration
	// Redis caches verifications across replicas and carries invalidations; nil disables both
	// (the database answers every local miss).
	Redis redis.UniversalClient
	// RedisTimeout bounds each cache read (default 100ms); on timeout the database answers.
	RedisTimeout time.Duration
	// Namespace prefixes the Redis keys and channel (default DefaultNamespace); Invalidate
	// must be given the same.
	Namespace string
	Log       *slog.Logger
}

// Verifier checks keys: in-process cache, then Redis, then the store. Misses are cached in
// process only, so a flood of bad keys does not reach the database more than once per LocalTTL
// per key. It is safe for concurrent use.
type Verifier struct {
	store Lookuper
	o     VerifierOptions
	local *cache.Loader[[32]byte, httpx.Identity]
	// redisDown throttles the "cache unavailable" log line.
	redisDownLogged atomic.Int64
}

// NewVerifier returns a verifier over store caching up to 100k results.
func NewVerifier(store Lookuper, o VerifierOptions) *Verifier {
	if o.LocalTTL <= 0 {
		o.LocalTTL = time.Second
	}
	if o.RedisTTL <= 0 {
		o.RedisTTL = time.Minute
	}
	if o.RedisTimeout <= 0 {
		o.RedisTimeout = 100 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	// A lookup is shared by every caller waiting on its key, so it has a deadline of its own.
	// Unknown and revoked keys are kept as errors, apart from the valid keys (10k beside their
	// 100k): keys made up by the million evict one another, never a valid key's identity, so
	// they cannot push the callers of valid keys onto Redis and the database. Other failures
	// are not kept at all.
	local := cache.New[[32]byte, httpx.Identity](func(h [32]byte) string { return string(h[:]) },
		cache.Options{TTL: o.LocalTTL, Timeout: lookupTimeout, Size: 100_000,
			FailTTL: o.LocalTTL, FailSize: 10_000, FailKeep: func(err error) bool { return errors.Is(err, ErrInvalid) }})
	return &Verifier{store: store, o: o, local: local}
}

// Verify returns the identity behind raw, ErrInvalid for an unknown or revoked key, or another
// error when neither the cache nor the store can answer (not cached).
func (v *Verifier) Verify(ctx context.Context, raw string) (httpx.Identity, error) {
	if raw == "" || len(raw) > MaxKeyLength {
		return httpx.Identity{}, ErrInvalid
	}
	h := Hash(raw)
	return v.local.Get(ctx, h, func(ctx context.Context) (httpx.Identity, error) {
		return v.resolve(ctx, h, hex.EncodeToString(h[:]))
	})
}

// Cached returns this replica's cached verification of raw (the identity, or ErrInvalid) without
// a lookup; ok is false when nothing is cached, and Verify would ask Redis or the database.
func (v *Verifier) Cached(raw string) (id httpx.Identity, ok bool, err error) {
	if raw == "" || len(raw) > MaxKeyLength {
		return httpx.Identity{}, true, ErrInvalid
	}
	h := Hash(raw)
	if id, ok := v.local.Cached(h); ok {
		return id, true, nil
	}
	if err, ok := v.local.CachedErr(h); ok {
		return httpx.Identity{}, true, err
	}
	return httpx.Identity{}, false, nil
}

func (v *Verifier) resolve(ctx context.Context, h [32]byte, hx string) (httpx.Identity, error) {
	if v.o.Redis != nil {
		rctx, cancel := context.WithTimeout(ctx, v.o.RedisTimeout)
		s, err := v.o.Redis.Get(rctx, keyName(v.o.Namespace, hx)).Result()
		cancel()
		switch {
		case err == nil:
			if id, ok := decodeIdentity(s); ok {
				return id, nil
			}
		case errors.Is(err, redis.Nil):
		default:
			v.logRedisDown(err)
		}
	}
	id, err := v.store.Lookup(ctx, h)
	if err != nil {
		return httpx.Identity{}, err
	}
	if v.o.Redis != nil {
		rctx, cancel := context.WithTimeout(ctx, v.o.RedisTimeout)
		name := keyName(v.o.Namespace, hx)
		err := storeUnlessInvalidated.Run(rctx, v.o.Redis, []string{name, name + tombstoneSuffix},
			encodeIdentity(id), v.o.RedisTTL.Milliseconds()).Err()
		if err != nil {
			v.logRedisDown(err)
		}
		cancel()
	}
	return id, nil
}

func (v *Verifier) logRedisDown(err error) {
	now := time.Now().Unix()
	if last := v.redisDownLogged.Load(); now-last >= 10 && v.redisDownLogged.CompareAndSwap(last, now) {
		v.o.Log.Warn("key verification cache in Redis unavailable; using the database", "error", err)
	}
}

// Forget drops a key's result from this process.
func (v *Verifier) Forget(h [32]byte) { v.local.Forget(h) }

// Listen applies invalidations published by other processes until ctx ends. The subscription
// reconnects by itself; invalidations missed meanwhile expire with LocalTTL.
func (v *Verifier) Listen(ctx context.Context) error {
	if v.o.Redis == nil {
		<-ctx.Done()
		return nil
	}
	return redisx.Follow(ctx, v.o.Redis, Channel(v.o.Namespace), func(payload string) {
		for _, hx := range strings.Split(payload, ",") {
			b, err := hex.DecodeString(hx)
			if err != nil || len(b) != 32 {
				continue
			}
			var h [32]byte
			copy(h[:], b)
			v.local.Forget(h)
		}
	})
}

// Invalidate drops the cached verifications of hashes in Redis and tells every verifier
// listening to drop them from its process (DefaultNamespace); the invalidation is also recorded
// for followers that were away (package keyevents).
func Invalidate(ctx context.Context, rdb redis.UniversalClient, hashes ...[32]byte) error {
	return InvalidateIn(ctx, rdb, DefaultNamespace, hashes...)
}

// InvalidateIn is Invalidate for the verifiers of namespace.
func InvalidateIn(ctx context.Context, rdb redis.UniversalClient, namespace string, hashes ...[32]byte) error {
	if len(hashes) == 0 {
		return nil
	}
	names := make([]string, len(hashes))
	hexes := make([]string, len(hashes))
	for i, h := range hashes {
		hexes[i] = hex.EncodeToString(h[:])
		names[i] = keyName(namespace, hexes[i])
	}
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, names...)
		// A lookup that read the database before the revoke may still be running; its
		// write-back checks the tombstone (storeUnlessInvalidated).
		for _, n := range names {
			p.Set(ctx, n+tombstoneSuffix, "1", tombstoneTTL)
		}
		// Recorded with the publish, for followers that were not subscribed at the moment
		// (stream-fanout re-reads the record whenever its subscription comes back).
		keyevents.Record(ctx, p, Channel(namespace), hexes)
		p.Publish(ctx, Channel(namespace), strings.Join(hexes, ","))
		return nil
	})
	if err != nil {
		return fmt.Errorf("invalidate cached key verifications: %w", err)
	}
	return nil
}

func encodeIdentity(id httpx.Identity) string {
	return strings.Join([]string{"v1", id.KeyID, id.UserID, id.OrgID, id.Role, id.Tier}, "\n")
}

func decodeIdentity(s string) (httpx.Identity, bool) {
	p := strings.Split(s, "\n")
	if len(p) != 6 || p[0] != "v1" || p[1] == "" || p[2] == "" {
		return httpx.Identity{}, false
	}
	return httpx.Identity{KeyID: p[1], UserID: p[2], OrgID: p[3], Role: p[4], Tier: p[5]}, true
}
