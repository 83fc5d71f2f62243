package store

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/search_addresses.sql
	searchAddressesSQL string
	//go:embed sql/search_entities.sql
	searchEntitiesSQL string
	//go:embed sql/search_twitter.sql
	searchTwitterSQL string
	//go:embed sql/search_types.sql
	searchTypesSQL string
	//go:embed sql/search_tags.sql
	searchTagsSQL string
	//go:embed sql/search_tokens.sql
	searchTokensSQL string
)

// LikeBody escapes s for use inside a LIKE pattern with ESCAPE '\'.
func LikeBody(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// AddressHit is an address a search found, by its address (ByLabel false) or its label.
type AddressHit struct {
	ChainType, Address, Label string
	ByLabel                   bool
}

// SearchAddresses returns up to n addresses starting with addrPrefix, then up to n whose
// lower-cased label starts with labelPrefix, each part in byte order.
func (s *Store) SearchAddresses(ctx context.Context, addrPrefix, labelPrefix string, n int) ([]AddressHit, error) {
	rows, err := s.pool.Query(ctx, searchAddressesSQL, addrPrefix, labelPrefix, n)
	if err != nil {
		return nil, fmt.Errorf("search addresses: %w", err)
	}
	var out []AddressHit
	var h AddressHit
	var kind int
	_, err = pgx.ForEachRow(rows, []any{&h.ChainType, &h.Address, &kind, &h.Label}, func() error {
		h.ByLabel = kind == 1
		out = append(out, h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search addresses: %w", err)
	}
	return out, nil
}

func (s *Store) searchEntities(ctx context.Context, sql, q string, limit, offset int) ([]attribution.Entity, error) {
	rows, err := s.pool.Query(ctx, sql, q, LikeBody(q), limit, offset)
	if err != nil {
		return nil, fmt.Errorf("search entities: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (attribution.Entity, error) { return scanEntity(r) })
	if err != nil {
		return nil, fmt.Errorf("search entities: %w", err)
	}
	return out, nil
}

// SearchEntities returns operator entities whose id or name contains q (lower case), best
// matches first.
func (s *Store) SearchEntities(ctx context.Context, q string, limit, offset int) ([]attribution.Entity, error) {
	return s.searchEntities(ctx, searchEntitiesSQL, q, limit, offset)
}

// SearchTwitter returns operator entities whose twitter handle contains q (lower case).
func (s *Store) SearchTwitter(ctx context.Context, q string, limit, offset int) ([]attribution.Entity, error) {
	return s.searchEntities(ctx, searchTwitterSQL, q, limit, offset)
}

// SearchTypes returns the entity types containing q (lower case).
func (s *Store) SearchTypes(ctx context.Context, q string, limit, offset int) ([]string, error) {
	rows, err := s.pool.Query(ctx, searchTypesSQL, q, LikeBody(q), limit, offset)
	if err != nil {
		return nil, fmt.Errorf("search types: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("search types: %w", err)
	}
	return out, nil
}

// TagHit is a tag a search found.
type TagHit struct{ ID, Label string }

// SearchTags returns the tags whose id or label contains q (lower case), then by rank.
func (s *Store) SearchTags(ctx context.Context, q string, limit, offset int) ([]TagHit, error) {
	rows, err := s.pool.Query(ctx, searchTagsSQL, q, LikeBody(q), limit, offset)
	if err != nil {
		return nil, fmt.Errorf("search tags: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TagHit, error) {
		var h TagHit
		err := r.Scan(&h.ID, &h.Label)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("search tags: %w", err)
	}
	return out, nil
}

// TokenHit is a token a search found: a registry token (PricingID set) or a token seen on chain
// that the registry does not list (Chain, Address and Decimals set).
type TokenHit struct {
	PricingID, Chain, Address, Name, Symbol string
	Decimals                                int
}

// SearchTokens returns tokens whose ticker, name or pricing id contains q (lower case), or with a
// contract address starting with it; equal tickers first.
func (s *Store) SearchTokens(ctx context.Context, q string, limit, offset int) ([]TokenHit, error) {
	rows, err := s.pool.Query(ctx, searchTokensSQL, q, LikeBody(q), limit, offset)
	if err != nil {
		return nil, fmt.Errorf("search tokens: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TokenHit, error) {
		var h TokenHit
		err := r.Scan(&h.PricingID, &h.Chain, &h.Address, &h.Name, &h.Symbol, &h.Decimals)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("search tokens: %w", err)
	}
	return out, nil
}

// SearchQuery is what one search reads from PostgreSQL, in one round trip: addresses by address
// prefix and by lower-cased label prefix (Addresses of each, 0: none), and tags and tokens whose
// text contains Text (lower case), each a page of Limit after Offset (Limit 0: none).
type SearchQuery struct {
	AddrPrefix, LabelPrefix string
	Addresses               int
	Text                    string
	Tags, Tokens            Page
}

// Page is a page of search results: Limit after Offset.
type Page struct{ Limit, Offset int }

// SearchHits is what Search found.
type SearchHits struct {
	Addresses []AddressHit
	Tags      []TagHit
	Tokens    []TokenHit
}

// Search runs the statements a search needs as one batch: one round trip and one connection,
// rather than one of each per category, which on a busy machine costs a search the slowest of
// several backends' waits for a core.
func (s *Store) Search(ctx context.Context, q SearchQuery) (SearchHits, error) {
	var out SearchHits
	b := &pgx.Batch{}
	if q.Addresses > 0 {
		b.Queue(searchAddressesSQL, q.AddrPrefix, q.LabelPrefix, q.Addresses).Query(func(rows pgx.Rows) error {
			var h AddressHit
			var kind int
			_, err := pgx.ForEachRow(rows, []any{&h.ChainType, &h.Address, &kind, &h.Label}, func() error {
				h.ByLabel = kind == 1
				out.Addresses = append(out.Addresses, h)
				return nil
			})
			return err
		})
	}
	if q.Tags.Limit > 0 {
		b.Queue(searchTagsSQL, q.Text, LikeBody(q.Text), q.Tags.Limit, q.Tags.Offset).Query(func(rows pgx.Rows) error {
			var err error
			out.Tags, err = pgx.CollectRows(rows, scanTagHit)
			return err
		})
	}
	if q.Tokens.Limit > 0 {
		b.Queue(searchTokensSQL, q.Text, LikeBody(q.Text), q.Tokens.Limit, q.Tokens.Offset).Query(func(rows pgx.Rows) error {
			var err error
			out.Tokens, err = pgx.CollectRows(rows, scanTokenHit)
			return err
		})
	}
	if b.Len() == 0 {
		return out, nil
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return SearchHits{}, fmt.Errorf("search: %w", err)
	}
	return out, nil
}

func scanTagHit(r pgx.CollectableRow) (TagHit, error) {
	var h TagHit
	err := r.Scan(&h.ID, &h.Label)
	return h, err
}

func scanTokenHit(r pgx.CollectableRow) (TokenHit, error) {
	var h TokenHit
	err := r.Scan(&h.PricingID, &h.Chain, &h.Address, &h.Name, &h.Symbol, &h.Decimals)
	return h, err
}
