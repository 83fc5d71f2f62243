package ws

import (
	"context"
	"sync"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// labelCache keeps each caller's labels and entity memberships of addresses seen lately, so a
// delivery asks user-labels only about addresses it has not seen within ttl. Entries of a user
// are dropped when user-labels announces a change (Forget), so an edit shows on the next
// transfer; the ttl bounds staleness while those announcements are late.
type labelCache struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	entries map[string]map[string]labelEntry // user → "<chainType>:<address>" → entry
	n       int
}

type labelEntry struct {
	label   *ulclient.Label
	entity  *ulclient.EntityRef
	expires time.Time
}

func newLabelCache(ttl time.Duration, max int) *labelCache {
	return &labelCache{ttl: ttl, max: max, entries: map[string]map[string]labelEntry{}}
}

// Forget drops what the cache holds for user.
func (h *Hub) Forget(user string) {
	lc := h.labels
	lc.mu.Lock()
	lc.n -= len(lc.entries[user])
	delete(lc.entries, user)
	lc.mu.Unlock()
}

// withLabels returns t with the caller's labels and entities on its addresses; ok is false
// when the caller has none there (t is then sent as rendered for everyone).
func (h *Hub) withLabels(ctx context.Context, id Identity, t *render.Transfer) (render.Transfer, bool) {
	if h.o.Labels == nil {
		return render.Transfer{}, false
	}
	ct := render.ChainType(t.Chain)
	refs := [2]ulclient.AddressRef{{ChainType: ct, Address: t.FromAddress.Address}, {ChainType: ct, Address: t.ToAddress.Address}}
	var got [2]labelEntry
	var miss []ulclient.AddressRef
	now := time.Now()
	lc := h.labels
	lc.mu.Lock()
	for i, r := range refs {
		e, ok := lc.entries[id.UserID][r.Key()]
		if !ok || now.After(e.expires) {
			miss = append(miss, r)
			continue
		}
		got[i] = e
	}
	lc.mu.Unlock()
	if len(miss) > 0 {
		look, err := h.o.Labels.Lookup(identityContext(ctx, id), miss)
		if err != nil {
			h.o.Log.Warn("user labels unavailable; transfer sent without them", "error", err)
			return render.Transfer{}, false
		}
		lc.mu.Lock()
		if lc.entries[id.UserID] == nil {
			lc.entries[id.UserID] = map[string]labelEntry{}
		}
		for _, r := range miss {
			e := labelEntry{expires: now.Add(lc.ttl)}
			if l, ok := look.Labels[r.Key()]; ok {
				e.label = &l
			}
			if es := look.Entities[r.Key()]; len(es) > 0 {
				e.entity = &es[0]
			}
			if lc.n < lc.max {
				if _, had := lc.entries[id.UserID][r.Key()]; !had {
					lc.n++
				}
				lc.entries[id.UserID][r.Key()] = e
			}
			for i := range refs {
				if refs[i] == r {
					got[i] = e
				}
			}
		}
		lc.mu.Unlock()
	}
	if got[0].label == nil && got[0].entity == nil && got[1].label == nil && got[1].entity == nil {
		return render.Transfer{}, false
	}
	out := *t
	apply(&out.FromAddress, ct, got[0])
	apply(&out.ToAddress, ct, got[1])
	return out, true
}

func apply(ai *render.AddressInfo, ct string, e labelEntry) {
	if e.label != nil {
		ai.UserLabel = &render.AddressLabel{Name: e.label.Name, Address: ai.Address, ChainType: ct}
	}
	if e.entity != nil {
		ai.UserEntity = &render.Entity{ID: e.entity.ID, Name: e.entity.Name, Note: e.entity.Note, Type: "user"}
		ai.IsUserAddress = true
	}
}
