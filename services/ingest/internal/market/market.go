// Package market is ingest's local read model of the token registry (market.tokens.v1) and the
// price feed (market.prices.v1): which pricing id a token has, and the USD price in force at a
// block's time.
package market

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// MaxAge is how old the newest price before a time may be and still count as in force there.
const MaxAge = 48 * time.Hour

// maxPoints bounds the history kept per pricing id (the oldest points go first).
const maxPoints = 500_000

type point struct {
	ms    int64
	price float64
}

// Model is the read model. The zero value is not usable; use New. It is safe for concurrent use.
type Model struct {
	mu       sync.RWMutex
	byToken  map[string]string   // "<chain>|<address>" (address "" for native) → pricing id
	deploys  map[string][]string // pricing id → its keys in byToken, to drop them on change
	prices   map[string][]point  // pricing id → points sorted by time
	received chan struct{}
	once     sync.Once
	src      Source           // where Fill reads what the book misses (nil: nowhere)
	looked   map[lookKey]bool // (pricing id, UTC day) windows Fill read from src
}

// New returns an empty model.
func New() *Model {
	return &Model{byToken: map[string]string{}, deploys: map[string][]string{}, prices: map[string][]point{}, received: make(chan struct{}),
		looked: map[lookKey]bool{}}
}

func key(chain, address string) string { return chain + "|" + strings.ToLower(address) }

// HandleTokens applies registry records (a tombstone removes the pricing id).
func (m *Model) HandleTokens(_ context.Context, batch []eventbus.Message[*eventsv1.MarketToken]) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range batch {
		id := r.Key
		if !r.Tombstone && r.Msg.PricingId != "" {
			id = r.Msg.PricingId
		}
		for _, k := range m.deploys[id] {
			if m.byToken[k] == id {
				delete(m.byToken, k)
			}
		}
		delete(m.deploys, id)
		if r.Tombstone {
			continue
		}
		for _, d := range r.Msg.Deployments {
			k := key(d.Chain, d.Address)
			m.byToken[k] = id
			m.deploys[id] = append(m.deploys[id], k)
		}
	}
	m.signal()
	return nil
}

// HandlePrices records price points.
func (m *Model) HandlePrices(_ context.Context, batch []eventbus.Message[*eventsv1.Price]) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range batch {
		if r.Tombstone || r.Msg.PricingId == "" || r.Msg.Price <= 0 {
			continue
		}
		m.add(r.Msg.PricingId, point{r.Msg.TimeMs, r.Msg.Price})
	}
	m.signal()
	return nil
}

// AddPrice records one point (for callers that feed prices directly).
func (m *Model) AddPrice(pricingID string, at time.Time, price float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.add(pricingID, point{at.UnixMilli(), price})
}

// SetToken maps a deployment to a pricing id (for callers that feed the registry directly).
func (m *Model) SetToken(chain, address, pricingID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := key(chain, address)
	m.byToken[k] = pricingID
	m.deploys[pricingID] = append(m.deploys[pricingID], k)
}

func (m *Model) add(id string, p point) {
	ps := m.prices[id]
	i := sort.Search(len(ps), func(i int) bool { return ps[i].ms >= p.ms })
	switch {
	case i < len(ps) && ps[i].ms == p.ms:
		ps[i] = p // a later point for the same time replaces it
	case i == len(ps):
		ps = append(ps, p)
	default:
		ps = append(ps, point{})
		copy(ps[i+1:], ps[i:])
		ps[i] = p
	}
	if len(ps) > maxPoints {
		ps = append(ps[:0], ps[len(ps)-maxPoints:]...)
	}
	m.prices[id] = ps
}

func (m *Model) signal() { m.once.Do(func() { close(m.received) }) }

// Received is closed once the first registry or price record arrived.
func (m *Model) Received() <-chan struct{} { return m.received }

// PricingID returns the pricing id of a token on a chain (address "" for the native coin), or
// "" when the registry does not list it.
func (m *Model) PricingID(chain, address string) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.byToken[key(chain, address)]
}

// Newest returns the time of a pricing id's newest price point, if it has any.
func (m *Model) Newest(pricingID string) (time.Time, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ps := m.prices[pricingID]
	if len(ps) == 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(ps[len(ps)-1].ms), true
}

// PriceAt returns the price in force at t: the newest point at or before t, if it is at most
// MaxAge old.
func (m *Model) PriceAt(pricingID string, t time.Time) (float64, bool) {
	if pricingID == "" {
		return 0, false
	}
	ms := t.UnixMilli()
	m.mu.RLock()
	defer m.mu.RUnlock()
	ps := m.prices[pricingID]
	i := sort.Search(len(ps), func(i int) bool { return ps[i].ms > ms })
	if i == 0 {
		return 0, false
	}
	p := ps[i-1]
	if ms-p.ms > MaxAge.Milliseconds() {
		return 0, false
	}
	return p.price, true
}
