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

// page cuts items (limit plus one read to tell whether more follow) to a page of q's feed. Its
// pageToken is the position after the page: in the newest-first orders while more follow; in
// the oldest-first orders always (an empty page's: emptyPage), so a client that has caught up
// polls on with it and gets exactly the changes logged since, where `since` = latest_diff_ts,
// which includes its bound, would repeat the newest one.
func page[T any](items []T, limit int, q store.UpdatesQuery, change func(T) store.Change) UpdatesPage {
	p := UpdatesPage{}
	if len(items) > limit {
		items, p.HasMore = items[:limit], true
	}
	if len(items) > 0 {
		last := change(items[len(items)-1])
		if p.HasMore || !q.Desc {
			p.PageToken = strconv.FormatInt(last.Seq, 10)
		}
		latest := last.At
		for _, it := range items { // newest first pages end with the oldest
			if at := change(it).At; at.After(latest) {
				latest = at
			}
		}
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
// inc says which optional parts an address update shows (its tags as populated_tags, its
// predicted entity, its cluster ids), as the enriched lookup's toggles do; it applies to the
// addresses feed.
func (s *Service) Updates(ctx context.Context, kind string, q store.UpdatesQuery, inc EnrichOptions) (UpdatesPage, error) {
	p, n, err := s.updatesPage(ctx, kind, q, inc)
	if err != nil || n > 0 {
		return p, err
	}
	return s.emptyPage(ctx, p, q)
}

// emptyPage gives an empty page of an oldest-first feed the position to poll on from (the token
// it was asked with, or the feed's head when none), and refuses a token past the head, which no
// page gave: it would skip the changes up to it.
func (s *Service) emptyPage(ctx context.Context, p UpdatesPage, q store.UpdatesQuery) (UpdatesPage, error) {
	if q.Desc && q.After == 0 {
		return p, nil
	}
	head, err := s.Store.ChangeLogHead(ctx)
	if err != nil {
		return UpdatesPage{}, err
	}
	if q.After > head {
		return UpdatesPage{}, invalid("pageToken", "not a token this API returned")
	}
	switch {
	case q.Desc:
	case q.After > 0:
		p.PageToken = strconv.FormatInt(q.After, 10)
	default:
		p.PageToken = strconv.FormatInt(head, 10)
	}
	return p, nil
}

// updatesPage reads a page of kind's feed; n is how many changes it holds.
func (s *Service) updatesPage(ctx context.Context, kind string, q store.UpdatesQuery, inc EnrichOptions) (p UpdatesPage, n int, err error) {
	limit := q.Limit
	q.Limit++
	switch kind {
	case "entities":
		us, err := s.Store.EntityUpdates(ctx, q)
		return page(us, limit, q, func(u store.EntityUpdate) store.Change { return u.Change }), len(us), err
	case "addresses":
		us, err := s.Store.AddressUpdates(ctx, q)
		if err != nil {
			return UpdatesPage{}, 0, err
		}
		if err := s.includeInUpdates(ctx, us, inc); err != nil {
			return UpdatesPage{}, 0, err
		}
		return page(us, limit, q, func(u store.AddressUpdate) store.Change { return u.Change }), len(us), nil
	case "tags":
		us, err := s.Store.TagUpdates(ctx, q)
		return page(us, limit, q, func(u store.TagUpdate) store.Change { return u.Change }), len(us), err
	default:
		us, err := s.Store.AddressTagUpdates(ctx, q)
		for i := range us {
			us[i].Chain = s.chainOf(us[i].ChainType)
		}
		return page(us, limit, q, func(u store.AddressTagUpdate) store.Change { return u.Change }), len(us), err
	}
}

// includeInUpdates fills or drops the optional parts of address updates as inc says. Tags shown
// are the address's tags now that apply on its chain.
func (s *Service) includeInUpdates(ctx context.Context, us []store.AddressUpdate, inc EnrichOptions) error {
	for i := range us {
		us[i].Chain = s.chainOf(us[i].ChainType)
		if !inc.Clusters {
			us[i].ClusterIDs = nil
		}
		if !inc.Predictions {
			us[i].PredictedEntity = nil
		}
	}
	if !inc.Tags || len(us) == 0 {
		return nil
	}
	keys := make([]store.AddressKey, len(us))
	for i, u := range us {
		keys[i] = store.AddressKey{ChainType: u.ChainType, Address: u.Address}
	}
	tags, err := s.Store.AddressTagsMany(ctx, keys)
	if err != nil {
		return err
	}
	for i, u := range us {
		us[i].PopulatedTags = tagsOnChain(tags[keys[i]], u.Chain)
	}
	return nil
}
