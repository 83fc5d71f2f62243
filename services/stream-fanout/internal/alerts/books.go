package alerts

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/ws"
)

// Lifetimes of the owners' books.
const (
	bookTTL     = time.Minute
	bookBackoff = 5 * time.Second
)

// books caches alert owners' labels and user entities (their books), read from user-labels,
// until user-labels announces a change of the owner (forget) or bookTTL passes. While
// user-labels fails, deliveries go without the owner's labels, as the stream's do.
type books struct {
	labels ws.Labels
	log    *slog.Logger

	mu   sync.Mutex
	m    map[string]bookEntry
	down time.Time
}

type bookEntry struct {
	book  ws.Book
	until time.Time
}

func newBooks(labels ws.Labels, log *slog.Logger) *books {
	return &books{labels: labels, log: log, m: map[string]bookEntry{}}
}

// get returns a's owner's book (empty without user-labels or while it fails).
func (b *books) get(ctx context.Context, a Alert) ws.Book {
	if b.labels == nil {
		return ws.Book{}
	}
	now := time.Now()
	b.mu.Lock()
	e, ok := b.m[a.Owner]
	down := now.Before(b.down)
	b.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.book
	}
	if down {
		return ws.Book{}
	}
	book, err := b.labels.Book(ownerContext(ctx, a))
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		b.down = now.Add(bookBackoff)
		b.log.Warn("user labels unavailable; alert deliveries sent without them for a while", "user", a.Owner, "error", err)
		return ws.Book{}
	}
	for u, e := range b.m {
		if now.After(e.until) {
			delete(b.m, u)
		}
	}
	b.m[a.Owner] = bookEntry{book: book, until: now.Add(bookTTL)}
	return book
}

// forget drops user's book.
func (b *books) forget(user string) {
	b.mu.Lock()
	delete(b.m, user)
	b.mu.Unlock()
}
