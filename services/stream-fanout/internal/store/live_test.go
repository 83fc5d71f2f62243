package store

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Live counts keyID's live sessions for the tests, dropping expired ids from its set.
func (s *Store) Live(ctx context.Context, keyID string) (int, error) {
	ids, err := s.rdb.SMembers(ctx, s.kkey(keyID)).Result()
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	cmds := make([]*redis.IntCmd, len(ids))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.Exists(ctx, s.skey(id))
		}
		return nil
	}); err != nil {
		return 0, err
	}
	n := 0
	var dead []any
	for i, c := range cmds {
		if c.Val() == 1 {
			n++
		} else {
			dead = append(dead, ids[i])
		}
	}
	s.prune(ctx, keyID, dead)
	return n, nil
}
