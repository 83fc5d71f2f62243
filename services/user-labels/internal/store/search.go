package store

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/search_labels.sql
	searchLabelsSQL string
	//go:embed sql/search_entities.sql
	searchEntitiesSQL string
)

// searchBound is how many of a search's best matches can be answered: the first searchBound of
// the ranking, whatever the offset, so a query matching many of a big user's labels (or
// entities) reads a bounded number of them and pages through one fixed list; an offset at or
// past it answers nothing.
const searchBound = 1000

// The search statements run with QueryExecModeExec: each execution is planned for its own
// pattern. A cached generic plan cannot see the pattern, so it would use the trigram index even
// for a one- or two-character query, for which pg_trgm has no trigram to look up and scans the
// whole index (every user's labels); and each plan sees whether the name-substring reason ($7)
// runs at all.
const searchMode = pgx.QueryExecModeExec

// likeBody escapes s for use inside a LIKE pattern with ESCAPE '\'.
func likeBody(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// SearchLabels returns the user's labels matching query (name prefix, or substring when
// substrings, or address prefix, case-insensitive), best matches first, from the first
// searchBound of the ranking.
func (s *Store) SearchLabels(ctx context.Context, user, query string, substrings bool, limit, offset int) ([]app.Label, error) {
	rows, err := s.pool.Query(ctx, searchLabelsSQL, searchMode, user, query, likeBody(query), limit, offset, searchBound, substrings)
	if err != nil {
		return nil, fmt.Errorf("search labels: %w", err)
	}
	out := []app.Label{}
	var l app.Label
	_, err = pgx.ForEachRow(rows, []any{&l.Name, &l.Note, &l.Address, &l.ChainType}, func() error {
		out = append(out, l)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search labels: %w", err)
	}
	return out, nil
}

// SearchEntities returns the user's entities matching query (name prefix, or substring when
// substrings, or an address prefix, case-insensitive), best matches first (from the first
// searchBound of the ranking), with their addresses.
func (s *Store) SearchEntities(ctx context.Context, user, query string, substrings bool, limit, offset int) ([]app.Entity, error) {
	rows, err := s.pool.Query(ctx, searchEntitiesSQL, searchMode, user, query, likeBody(query), limit, offset, searchBound, substrings)
	if err != nil {
		return nil, fmt.Errorf("search entities: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.Entity, error) { return scanEntity(r) })
	if err != nil {
		return nil, fmt.Errorf("search entities: %w", err)
	}
	if out == nil {
		out = []app.Entity{}
	}
	for i := range out {
		refs, err := addressesOf(ctx, s.pool, out[i].ID)
		if err != nil {
			return nil, fmt.Errorf("addresses of entity %s: %w", out[i].ID, err)
		}
		out[i].Addresses = app.Group(refs)
	}
	return out, nil
}
