// Package ledger is the edge's live credit ledger as other services read it: who a call is
// billed to, the billing period, the Redis hash holding a billed entity's credits used in a
// period, and reading those figures. The edge's metering writes the hashes (see
// docs/edge.md); stream-fanout reads them to stop the streams of callers whose credits are
// spent. The layout lives only here.
package ledger

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Entity types that own billing periods.
const (
	EntityOrg  = "org"
	EntityUser = "user"
)

// Fields of a period's hash: the credits used, and the latest call time (unix ms) they include.
const (
	FieldUsed    = "used"
	FieldThrough = "through"
)

// keyPrefix starts every period hash ("v2": a hash, where an earlier layout kept a plain
// counter that replicas incremented).
const keyPrefix = "edge:credits:v2:"

// Entity is who a call is billed to: the caller's org, or the caller for individuals.
type Entity struct {
	Type string // EntityOrg or EntityUser
	ID   string
}

// BilledEntity returns the entity billed for a caller.
func BilledEntity(userID, orgID string) Entity {
	if orgID != "" {
		return Entity{Type: EntityOrg, ID: orgID}
	}
	return Entity{Type: EntityUser, ID: userID}
}

// PeriodOf returns the billing period containing t: the calendar month, UTC.
func PeriodOf(t time.Time) (start, end time.Time) {
	t = t.UTC()
	start = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 1, 0)
}

// Key names the Redis hash of e's credits in the billing period holding at:
// edge:credits:v2:<org|user>:<id>:<YYYY-MM>.
func Key(e Entity, at time.Time) string {
	start, _ := PeriodOf(at)
	return keyPrefix + e.Type + ":" + e.ID + ":" + start.Format("2006-01")
}

// Used reads the credits used of each period hash named (Key), in one round trip: -1 for a
// hash that does not exist (no figure yet this period; the edge seeds it on its next call).
func Used(ctx context.Context, rdb redis.Cmdable, keys []string) ([]int64, error) {
	cmds := make([]*redis.StringCmd, len(keys))
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HGet(ctx, k, FieldUsed)
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]int64, len(keys))
	for i, c := range cmds {
		v, err := c.Int64()
		switch {
		case errors.Is(err, redis.Nil):
			v = -1
		case err != nil:
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
