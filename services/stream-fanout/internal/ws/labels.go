package ws

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
	"go.opentelemetry.io/otel/trace"
)

// Labels is what the stream needs of user-labels: a caller's whole book of labels and entities
// (deliveries are labelled from memory, never by a call per transfer), and, for the entities a
// filter names, the caller's user entities and the caller's additions to operator entities,
// each kind in one call for all of a filter's (never a call per entity).
type Labels interface {
	Book(ctx context.Context) (Book, error)
	// Entities returns those of ids (lower case) that are the caller's user entities, by id.
	Entities(ctx context.Context, ids []string) (map[string]ulclient.UserEntity, error)
	// Additions returns the caller's addresses added to the operator entities ids, by entity id
	// then chain type (an entity with none may be absent).
	Additions(ctx context.Context, ids []string) (map[string]map[string][]string, error)
}

// Book is a caller's labels and entity memberships by address.
type Book struct {
	Labels   map[render.AddrKey]string
	Entities map[render.AddrKey]*render.Entity
}

// LabelsClient reads user-labels with the caller's identity from the context.
type LabelsClient struct {
	c  *httpx.InternalClient
	ul *ulclient.Client
}

// NewLabelsClient returns a client of the user-labels service at baseURL.
func NewLabelsClient(baseURL string, signer *httpx.Signer, tp trace.TracerProvider) (*LabelsClient, error) {
	c, err := httpx.NewInternalClient("user-labels", baseURL, signer, tp, 10*time.Second)
	if err != nil {
		return nil, err
	}
	ul, err := ulclient.New(baseURL, signer, tp)
	if err != nil {
		return nil, err
	}
	return &LabelsClient{c: c, ul: ul}, nil
}

// Entities returns the caller's user entities among ids, in one call (POST /internal/entities).
func (l *LabelsClient) Entities(ctx context.Context, ids []string) (map[string]ulclient.UserEntity, error) {
	return l.ul.Entities(ctx, ids)
}

// Additions returns the caller's additions to the operator entities ids, in one call (POST
// /internal/additions).
func (l *LabelsClient) Additions(ctx context.Context, ids []string) (map[string]map[string][]string, error) {
	return l.ul.AdditionsOf(ctx, ids)
}

// Book reads every label and entity of the caller.
func (l *LabelsClient) Book(ctx context.Context) (Book, error) {
	var labels []struct {
		Name      string `json:"name"`
		Address   string `json:"address"`
		ChainType string `json:"chainType"`
	}
	if err := l.c.Do(ctx, http.MethodGet, "/user/labels", nil, nil, &labels); err != nil {
		return Book{}, err
	}
	var ents []ulclient.UserEntity
	if err := l.c.Do(ctx, http.MethodGet, "/user/entities", url.Values{"includeAddresses": {"true"}}, nil, &ents); err != nil {
		return Book{}, err
	}
	b := Book{Labels: make(map[render.AddrKey]string, len(labels)), Entities: map[render.AddrKey]*render.Entity{}}
	for _, lb := range labels {
		b.Labels[render.AddrKey{ChainType: lb.ChainType, Address: render.NormalizeAddress(lb.ChainType, lb.Address)}] = lb.Name
	}
	for _, e := range ents {
		re := &render.Entity{ID: e.ID, Name: e.Name, Note: e.Note, Type: "user"}
		for ct, as := range e.Addresses {
			for _, a := range as {
				k := render.AddrKey{ChainType: ct, Address: render.NormalizeAddress(ct, a)}
				if _, ok := b.Entities[k]; !ok {
					b.Entities[k] = re
				}
			}
		}
	}
	return b, nil
}

// labelCache holds the books of callers with open connections. A book is read once and kept
// until user-labels announces a change of that caller (Forget) or ttl passes, which bounds
// staleness while announcements are late.
type labelCache struct {
	ttl time.Duration

	mu    sync.Mutex
	books map[string]*bookEntry
	// adds are callers' additions to operator entities (by user, then entity), kept like books:
	// a reconnect of many sessions naming an entity asks user-labels once per caller.
	adds map[string]map[string]addedEntry
	// down is until when user-labels is not asked after a failure: transfers go without the
	// caller's labels meanwhile rather than waiting on it.
	down time.Time
	// gen counts Forget calls: a connection's cached book is good while gen has not moved.
	gen atomic.Uint64
	// swept is when expired books and additions were last dropped (sweepLocked).
	swept time.Time
}

type bookEntry struct {
	ready chan struct{}
	book  Book
	err   error
	until time.Time
}

// isReady says the entry's book has been read (successfully or not).
func (e *bookEntry) isReady() bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

const labelsBackoff = 5 * time.Second

func newLabelCache(ttl time.Duration) *labelCache {
	return &labelCache{ttl: ttl, books: map[string]*bookEntry{}, adds: map[string]map[string]addedEntry{}}
}

// isDown says user-labels failed within labelsBackoff of now: it is not asked meanwhile.
func (lc *labelCache) isDown(now time.Time) bool {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return now.Before(lc.down)
}

// backOff stops asking user-labels for labelsBackoff after a failure.
func (lc *labelCache) backOff() {
	lc.mu.Lock()
	lc.down = time.Now().Add(labelsBackoff)
	lc.mu.Unlock()
}

// sweepLocked drops the books and additions that expired, at most once a ttl (a minute when
// ttl is not positive), as entries are added: an entry is otherwise only replaced by its
// caller's next read or dropped by a change user-labels announces, so the callers who went
// away would stay in memory for good. An entry still being read is kept. lc.mu is held.
func (lc *labelCache) sweepLocked(now time.Time) {
	every := lc.ttl
	if every <= 0 {
		every = time.Minute
	}
	if now.Sub(lc.swept) < every {
		return
	}
	lc.swept = now
	for user, e := range lc.books {
		if e.isReady() && now.After(e.until) && (e.err == nil || now.After(lc.down)) {
			delete(lc.books, user)
		}
	}
	for user, m := range lc.adds {
		for entity, e := range m {
			if now.After(e.until) {
				delete(m, entity)
			}
		}
		if len(m) == 0 {
			delete(lc.adds, user)
		}
	}
}

// Forget drops user's book and additions: the next delivery reads the book again, the next
// filter built the additions.
func (h *Hub) Forget(user string) {
	h.labels.mu.Lock()
	delete(h.labels.books, user)
	delete(h.labels.adds, user)
	h.labels.gen.Add(1)
	h.labels.mu.Unlock()
}

// book is the caller's book for a delivery: the connection keeps the entry it last got while
// no change was announced and it is fresh, so a delivery takes no lock shared by every
// connection (writer goroutine only).
func (c *conn) book(now time.Time) (Book, bool) {
	lc := c.h.labels
	if e := c.bookE; e != nil && c.bookGen == lc.gen.Load() && now.Before(e.until) {
		return e.book, true
	}
	gen := lc.gen.Load()
	e := c.h.bookEntry(c.ctx, c.id)
	if e == nil || e.err != nil {
		c.bookE = nil
		return Book{}, false
	}
	c.bookE, c.bookGen = e, gen
	return e.book, true
}

// bookEntry returns the caller's entry once it is read (nil while user-labels is down or ctx
// ended first).
func (h *Hub) bookEntry(ctx context.Context, id Identity) *bookEntry {
	lc := h.labels
	now := time.Now()
	lc.mu.Lock()
	e := lc.books[id.UserID]
	// An entry still being read is waited for: its err is written, without the lock, only
	// before ready is closed, so it is looked at only after.
	if e != nil && e.isReady() && (e.err == nil && now.After(e.until) || e.err != nil && now.After(lc.down)) {
		e = nil
	}
	if e == nil {
		if now.Before(lc.down) {
			lc.mu.Unlock()
			return nil
		}
		lc.sweepLocked(now)
		e = &bookEntry{ready: make(chan struct{}), until: now.Add(lc.ttl)}
		lc.books[id.UserID] = e
		lc.mu.Unlock()
		e.book, e.err = h.o.Labels.Book(identityContext(context.WithoutCancel(ctx), id))
		if e.err != nil {
			lc.backOff()
			h.o.Log.Warn("user labels unavailable; transfers sent without them for a while", "user", id.UserID, "error", e.err, "for", labelsBackoff)
		}
		close(e.ready)
	} else {
		lc.mu.Unlock()
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil
	}
	return e
}

// transferJSON is the Transfer JSON the writer sends for r: the one rendered for every
// client, or, when the caller has labels or entities on its addresses, r's transfer with them.
// It uses and refreshes the connection's cached book (c.bookE): writer goroutine only.
func (c *conn) transferJSON(r *engine.Rendered, now time.Time) []byte {
	if c.h.o.Labels == nil {
		return r.JSON
	}
	b, ok := c.book(now)
	if !ok {
		return r.JSON
	}
	return transferWith(r, b)
}

// sharedBook is the caller's book from the hub's cache, for goroutines other than the writer
// (an empty book when there are no user labels or user-labels is down).
func (c *conn) sharedBook() Book {
	if c.h.o.Labels == nil {
		return Book{}
	}
	e := c.h.bookEntry(c.ctx, c.id)
	if e == nil || e.err != nil {
		return Book{}
	}
	return e.book
}

// transferWith is r's Transfer JSON with the labels and entities of b on its addresses: the
// JSON rendered for every client when b has none there.
func transferWith(r *engine.Rendered, b Book) []byte {
	if len(b.Labels)+len(b.Entities) == 0 {
		return r.JSON
	}
	t := &r.T
	ct := render.ChainType(t.Chain)
	fk, tk := render.AddrKey{ChainType: ct, Address: t.FromAddress.Address}, render.AddrKey{ChainType: ct, Address: t.ToAddress.Address}
	_, fok := b.Labels[fk]
	_, tok := b.Labels[tk]
	if !fok && !tok && b.Entities[fk] == nil && b.Entities[tk] == nil {
		return r.JSON
	}
	return labelledJSON(t, b)
}

// labelledJSON renders t with the caller's labels and entities from b on its addresses. It is
// kept out of line: its copy of the Transfer would otherwise sit in the frame of every
// delivery, and the writer's stack would grow (and be copied) for deliveries without labels.
//
//go:noinline
func labelledJSON(t *render.Transfer, b Book) []byte {
	ct := render.ChainType(t.Chain)
	fk, tk := render.AddrKey{ChainType: ct, Address: t.FromAddress.Address}, render.AddrKey{ChainType: ct, Address: t.ToAddress.Address}
	fl, fok := b.Labels[fk]
	tl, tok := b.Labels[tk]
	out := *t
	out.FromAddress.SetUser(ct, fl, fok, b.Entities[fk])
	out.ToAddress.SetUser(ct, tl, tok, b.Entities[tk])
	j, _ := json.Marshal(out)
	return j
}

// LabelledTransfer is r's Transfer JSON as a caller with book b is sent it on the stream: with
// the caller's labels and entities on its addresses (the alerts' webhooks render with it).
func LabelledTransfer(r *engine.Rendered, b Book) []byte { return transferWith(r, b) }
