package httpx

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/maphash"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
)

// Identity is the authenticated caller the edge vouches for. Services trust it only when the
// signature over it verifies with the shared internal secret.
type Identity struct {
	KeyID  string // API key id
	UserID string // the user who owns the key: labels and user entities belong to this user
	OrgID  string // empty for individual subscribers
	Role   string // RoleOrgAdmin, RoleOrgMember or RoleIndividual
	Tier   string // tier name
}

// Roles of a user.
const (
	RoleOrgAdmin   = "org_admin"
	RoleOrgMember  = "org_member"
	RoleIndividual = "individual"
)

// HeaderCaller carries the signed identity from the edge to services, in one header (one
// header to set, send, parse and sort per hop instead of seven):
//
//	X-Caller: v1 <key id> <user id> <org id> <role> <tier> <unix time> <signature>
//
// or, when the signature also covers the caller's key hash (HeaderCallerKey, to stream-fanout
// only), the same fields tagged v2.
//
// Fields are path-escaped and separated by single spaces; an empty org id is an empty field.
// The signature is HMAC-SHA256 over the fields with the shared internal secret. The edge strips
// every X-Caller* header a client sends and sets its own.
const HeaderCaller = "X-Caller"

// HeaderCallerKey carries, to stream-fanout only, the hex SHA-256 of the caller's API key: the
// name the edge's key invalidations (edge:keys:invalidate) give a key, so that a stream open
// under a key can be closed when the key is revoked or its tier changes. It is an X-Caller*
// header, so the edge strips any a client sends, and the X-Caller signature covers it
// (SignWithKey), so no one without the internal secret can add, alter or remove it.
const HeaderCallerKey = "X-Caller-Key"

// HeaderRows is set by services on list responses with the number of rows returned; the edge
// reads it for per-row credits and strips it.
const HeaderRows = "X-Chainintel-Rows"

// MaxIdentitySkew is how far a signature's time may be from the verifier's clock.
const MaxIdentitySkew = 5 * time.Minute

// Errors from Verify.
var (
	ErrNoIdentity      = errors.New("no caller identity")
	ErrBadIdentity     = errors.New("caller identity signature is invalid")
	ErrExpiredIdentity = errors.New("caller identity is expired")
	// ErrIdentityVersion is a valid v1 signature sent with a key hash it does not cover: what
	// an edge older than its stream-fanout sends (it sent the key header unsigned). It is an
	// ErrBadIdentity, answered with a message naming the mismatch.
	ErrIdentityVersion = fmt.Errorf("%w: a v1 signature with an unsigned %s header (an edge older than the service; roll both to the same version)", ErrBadIdentity, HeaderCallerKey)
)

// Signer signs and verifies identity headers with the shared internal secret. It is safe for
// concurrent use. A signature covers the identity and the second it was made in, so the edge
// keeps the last one per identity slot and reuses it within that second instead of computing
// an HMAC per request.
type Signer struct {
	secret []byte
	seed   maphash.Seed
	recent [256]atomic.Pointer[signature]
}

type signature struct {
	id     Identity
	key    string // the HeaderCallerKey value signed with id, "" for none
	unix   int64
	header []string // the X-Caller value
}

// NewSigner returns a signer for secret, which must not be empty.
func NewSigner(secret string) *Signer {
	return &Signer{secret: []byte(secret), seed: maphash.MakeSeed()}
}

// version tags a signature: v1 covers the identity and time, v2 the caller's key hash too.
func version(key string) string {
	if key == "" {
		return "v1"
	}
	return "v2"
}

// mac signs id, the time ts and the caller's key hash key. A key is one more line and another
// version tag, so a signature made without one (every service but stream-fanout) is the same as
// before keys were signed, and one made with a key never verifies without it.
func (s *Signer) mac(id Identity, ts, key string) string {
	m := hmac.New(sha256.New, s.secret)
	for _, part := range []string{version(key), id.KeyID, id.UserID, id.OrgID, id.Role, id.Tier, ts} {
		m.Write([]byte(part))
		m.Write([]byte{'\n'})
	}
	if key != "" {
		m.Write([]byte("key " + key + "\n"))
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Sign writes id into h with a signature for time now (and drops any HeaderCallerKey, which
// would not verify with it).
func (s *Signer) Sign(h http.Header, id Identity, now time.Time) {
	s.SignWithKey(h, id, "", now)
}

// SignWithKey is Sign that also sends the caller's key hash (HeaderCallerKey) under the same
// signature; an empty keyHash sends none.
func (s *Signer) SignWithKey(h http.Header, id Identity, keyHash string, now time.Time) {
	unix := now.Unix()
	slot := &s.recent[maphash.String(s.seed, id.KeyID)%uint64(len(s.recent))]
	sig := slot.Load()
	if sig == nil || sig.unix != unix || sig.id != id || sig.key != keyHash {
		ts := strconv.FormatInt(unix, 10)
		v := strings.Join([]string{version(keyHash), url.PathEscape(id.KeyID), url.PathEscape(id.UserID), url.PathEscape(id.OrgID),
			url.PathEscape(id.Role), url.PathEscape(id.Tier), ts, s.mac(id, ts, keyHash)}, " ")
		sig = &signature{id: id, key: keyHash, unix: unix, header: []string{v}}
		slot.Store(sig)
	}
	h[HeaderCaller] = sig.header // canonical already; the slice is never written to
	if keyHash == "" {
		delete(h, HeaderCallerKey)
	} else {
		h[HeaderCallerKey] = []string{keyHash}
	}
}

// Verify reads and checks the identity in h. ErrNoIdentity when there is none.
func (s *Signer) Verify(h http.Header, now time.Time) (Identity, error) {
	id, _, err := s.VerifyWithKey(h, now)
	return id, err
}

// VerifyWithKey is Verify that also returns the caller's key hash the signature covers ("" when
// the edge sent none). A key header added, altered, repeated or removed after signing fails
// with ErrBadIdentity; one beside a valid v1 signature with ErrIdentityVersion.
func (s *Signer) VerifyWithKey(h http.Header, now time.Time) (Identity, string, error) {
	v := h.Get(HeaderCaller)
	if v == "" {
		return Identity{}, "", ErrNoIdentity
	}
	keys := h.Values(HeaderCallerKey)
	if len(keys) > 1 {
		return Identity{}, "", ErrBadIdentity
	}
	var key string
	if len(keys) == 1 {
		key = keys[0]
	}
	id, err := s.verify(v, key, now)
	return id, key, err
}

func (s *Signer) verify(v, key string, now time.Time) (Identity, error) {
	f := strings.Split(v, " ")
	if len(f) != 8 || f[0] != version(key) {
		if len(f) == 8 && f[0] == "v1" && key != "" {
			// An older edge's signature (valid without the key) is told apart from a forgery.
			if _, err := s.verify(v, "", now); !errors.Is(err, ErrBadIdentity) {
				return Identity{}, ErrIdentityVersion
			}
		}
		return Identity{}, ErrBadIdentity
	}
	var id Identity
	for i, dst := range []*string{&id.KeyID, &id.UserID, &id.OrgID, &id.Role, &id.Tier} {
		u, err := url.PathUnescape(f[i+1])
		if err != nil {
			return Identity{}, ErrBadIdentity
		}
		*dst = u
	}
	ts, sig := f[6], f[7]
	if !hmac.Equal([]byte(sig), []byte(s.mac(id, ts, key))) {
		return Identity{}, ErrBadIdentity
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return Identity{}, ErrBadIdentity
	}
	if d := now.Sub(time.Unix(sec, 0)); d > MaxIdentitySkew || d < -MaxIdentitySkew {
		return Identity{}, ErrExpiredIdentity
	}
	if id.UserID == "" || id.KeyID == "" {
		return Identity{}, ErrBadIdentity
	}
	return id, nil
}

// StripIdentity removes every identity header from h, so a client cannot pose as the edge.
func StripIdentity(h http.Header) {
	const prefix = "X-Caller"
	for k := range h {
		if len(k) >= len(prefix) && strings.EqualFold(k[:len(prefix)], prefix) {
			delete(h, k)
		}
	}
}

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the caller identity in ctx, if any.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

type callerKeyKey struct{}

// CallerKeyFrom returns the caller's key hash the verified identity's signature covered
// (HeaderCallerKey), "" when there was none.
func CallerKeyFrom(ctx context.Context) string {
	k, _ := ctx.Value(callerKeyKey{}).(string)
	return k
}

// IdentityMiddleware verifies identity headers when present and puts the identity (and the
// signed caller key hash, CallerKeyFrom) in the request context. A request with a bad or
// expired signature is refused with 401; one without identity passes on without it
// (RequireIdentity refuses those on user-scoped routes).
func IdentityMiddleware(s *Signer) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, key, err := s.VerifyWithKey(c.Request.Header, time.Now())
		switch {
		case errors.Is(err, ErrNoIdentity):
		case errors.Is(err, ErrIdentityVersion):
			Error(c, http.StatusUnauthorized, "invalid caller identity: "+strings.TrimPrefix(err.Error(), ErrBadIdentity.Error()+": "))
			return
		case err != nil:
			Error(c, http.StatusUnauthorized, "invalid caller identity")
			return
		default:
			ctx := WithIdentity(c.Request.Context(), id)
			if key != "" {
				ctx = context.WithValue(ctx, callerKeyKey{}, key)
			}
			c.Request = c.Request.WithContext(ctx)
		}
		c.Next()
	}
}

// RequireIdentity refuses requests without a verified caller identity with 401.
func RequireIdentity() gin.HandlerFunc {
	return func(c *gin.Context) {
		if _, ok := IdentityFrom(c.Request.Context()); !ok {
			Error(c, http.StatusUnauthorized, "error validating API key")
			return
		}
		c.Next()
	}
}
