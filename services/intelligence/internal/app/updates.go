package app

import (
	"context"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// Change feeds (GET /intelligence/{entities,addresses,tags,address_tags}/updates).
const (
	DefaultUpdates = 100
	MaxUpdates     = 1000
)

// UpdatesPage is a page of a change feed: the changes in sequence order, whether more follow
// (then PageToken continues after the last), and the time of the newest change on the page.
type UpdatesPage struct {
	Items        any        `json:"items"`
	HasMore      bool       `json:"hasMore"`
	PageToken    string     `json:"pageToken,omitempty"`
	LatestDiffTs *time.Time `json:"latest_diff_ts"`
}

func page[T any](items []T, limit int, change func(T) store.Change) UpdatesPage {
	p := UpdatesPage{}
	if len(items) > limit {
		items, p.HasMore = items[:limit], true
	}
	if len(items) > 0 {
		last := change(items[len(items)-1])
		if p.HasMore {
			p.PageToken = strconv.FormatInt(last.Seq, 10)
		}
		latest := last.At
		p.LatestDiffTs = &latest
	}
	if items == nil {
		items = []T{}
	}
	p.Items = items
	return p
}

func (s *Service) chainOf(chainType string) string {
	if c, ok := firstOfType(s.Chains, chains.Type(chainType)); ok {
		return c.Name
	}
	return chainType
}

// Updates returns a page of the change feed of kind (entities, addresses, tags or
// address_tags); q.Limit is the page size (one more row is read to tell whether more follow).
func (s *Service) Updates(ctx context.Context, kind string, q store.UpdatesQuery) (UpdatesPage, error) {
	limit := q.Limit
	q.Limit++
	switch kind {
	case "entities":
		us, err := s.Store.EntityUpdates(ctx, q)
		return page(us, limit, func(u store.EntityUpdate) store.Change { return u.Change }), err
	case "addresses":
		us, err := s.Store.AddressUpdates(ctx, q)
		for i := range us {
			us[i].Chain = s.chainOf(us[i].ChainType)
		}
		return page(us, limit, func(u store.AddressUpdate) store.Change { return u.Change }), err
	case "tags":
		us, err := s.Store.TagUpdates(ctx, q)
		return page(us, limit, func(u store.TagUpdate) store.Change { return u.Change }), err
	default:
		us, err := s.Store.AddressTagUpdates(ctx, q)
		for i := range us {
			us[i].Chain = s.chainOf(us[i].ChainType)
		}
		return page(us, limit, func(u store.AddressTagUpdate) store.Change { return u.Change }), err
	}
}
