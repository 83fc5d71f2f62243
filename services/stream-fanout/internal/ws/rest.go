package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/google/uuid"
)

// Session kinds.
const (
	KindWS   = "ws"   // made by a subscribe message
	KindREST = "rest" // made by POST /ws/sessions
	KindV2   = "v2"   // a v2 stream
)

// V2FilterID is the alertId of a v2 stream's one filter.
func V2FilterID(streamID string) string { return streamID }

// SessionView is a session as the REST routes show it.
type SessionView struct {
	SessionID     string    `json:"sessionId"`
	TransfersUsed int64     `json:"transfersUsed"`
	CreatedAt     time.Time `json:"createdAt"`
	IsActive      bool      `json:"isActive"`
	IsConnected   *bool     `json:"isConnected,omitempty"`
}

func sessionView(ss store.Session) SessionView {
	c := ss.Connected()
	return SessionView{SessionID: ss.ID, TransfersUsed: ss.Used, CreatedAt: ss.Created, IsActive: true, IsConnected: &c}
}

// SessionLimitError refuses a session or v2 stream over the key's cap (Options.MaxSessionsPerKey).
type SessionLimitError struct {
	Limit int
	// RetryAfter is the key's session window: a session nobody is connected to expires that
	// long after its last connection, the soonest a slot frees unless the caller deletes one.
	RetryAfter time.Duration
}

func (e *SessionLimitError) Error() string {
	return fmt.Sprintf("too many sessions and v2 streams for this key (limit %d live at once); delete one or let one expire", e.Limit)
}

// ErrCreditLimit refuses a session or stream of a caller whose credits are spent on a tier
// without overage.
var ErrCreditLimit = errors.New(creditLimitReason)

// create stores a session made over REST unless the caller's credits are spent
// (ErrCreditLimit) or the key already has MaxSessionsPerKey live sessions and streams.
// Concurrent creates are checked again once stored, so together they never leave the key over
// its cap.
func (h *Hub) create(ctx context.Context, id Identity, ss store.Session, ttl time.Duration) error {
	if spent, err := h.CreditsSpent(ctx, id); err != nil || spent {
		if err == nil {
			err = ErrCreditLimit
		}
		return err
	}
	return h.storeCapped(ctx, ss, ttl)
}

// CreateSession makes an empty session a client connects to with ?session_id=; it waits the
// reconnect window for its first connection.
func (h *Hub) CreateSession(ctx context.Context, id Identity) (SessionView, error) {
	ss := store.Session{ID: uuid.NewString(), KeyID: id.KeyID, UserID: id.UserID, Kind: KindREST, Created: h.o.Now().UTC().Truncate(time.Millisecond)}
	if err := h.create(ctx, id, ss, h.o.Window); err != nil {
		return SessionView{}, err
	}
	v := sessionView(ss)
	v.IsConnected = nil
	return v, nil
}

// Sessions lists the key's sessions of kind ws and rest, oldest first.
func (h *Hub) Sessions(ctx context.Context, id Identity) ([]SessionView, error) {
	all, err := h.o.Store.List(ctx, id.KeyID)
	if err != nil {
		return nil, err
	}
	out := []SessionView{}
	for _, ss := range sortByCreated(all) {
		if ss.Kind != KindV2 {
			out = append(out, sessionView(ss))
		}
	}
	return out, nil
}

// Session returns one session of the key (store.ErrNoSession when none).
func (h *Hub) Session(ctx context.Context, id Identity, sessionID string) (SessionView, error) {
	ss, err := h.o.Store.Get(ctx, sessionID, id.KeyID)
	if err != nil {
		return SessionView{}, err
	}
	if ss.Kind == KindV2 {
		return SessionView{}, store.ErrNoSession
	}
	return sessionView(ss), nil
}

// DeleteSession removes a session or stream of the key; a connection serving it is dropped at
// its next save. false when there was none.
func (h *Hub) DeleteSession(ctx context.Context, id Identity, sessionID string, kindV2 bool) (bool, error) {
	ss, err := h.o.Store.Get(ctx, sessionID, id.KeyID)
	if errors.Is(err, store.ErrNoSession) || err == nil && (ss.Kind == KindV2) != kindV2 {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return h.o.Store.Delete(ctx, sessionID, id.KeyID)
}

// ActiveConnections is how many stream connections the key has open across replicas.
func (h *Hub) ActiveConnections(ctx context.Context, id Identity) (int64, error) {
	return h.o.Store.Connections(ctx, id.KeyID)
}

// StreamView is a v2 stream as POST /ws/v2/streams answers it.
type StreamView struct {
	StreamID  string    `json:"streamId"`
	ID        int64     `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
}

// StreamItem is a v2 stream as GET /ws/v2/streams lists it (StreamV2Response): every field is
// required, lastActive null until a connection has served the stream.
type StreamItem struct {
	StreamID      string     `json:"streamId"`
	ID            int64      `json:"id"`
	CreatedAt     time.Time  `json:"createdAt"`
	LastActive    *time.Time `json:"lastActive"`
	TransfersUsed int64      `json:"transfersUsed"`
	IsConnected   bool       `json:"isConnected"`
}

// CreateStream validates a v2 stream's filter and stores the stream; it waits the v2 window for
// its first connection. A filter error is a *filter.Error; a filter naming an entity or type the
// replica's read model does not hold while it is still loading is ErrNamesLoading.
func (h *Hub) CreateStream(ctx context.Context, id Identity, raw filter.Raw) (StreamView, error) {
	// What it names must exist now, as at subscribe: the caller's user entities, the operator
	// entities and entity types.
	c := &conn{h: h, id: id}
	if _, err := c.build(ctx, "check", raw, true); err != nil {
		return StreamView{}, err
	}
	seq, err := h.o.Store.NextSeq(ctx, id.KeyID)
	if err != nil {
		return StreamView{}, err
	}
	sid := uuid.NewString()
	b, _ := json.Marshal(raw)
	ss := store.Session{ID: sid, KeyID: id.KeyID, UserID: id.UserID, Kind: KindV2, Seq: seq, Created: h.o.Now().UTC().Truncate(time.Millisecond),
		Filters: []store.FilterRec{{ID: V2FilterID(sid), Raw: b}}}
	if err := h.create(ctx, id, ss, h.o.V2Window); err != nil {
		return StreamView{}, err
	}
	return StreamView{StreamID: sid, ID: seq, CreatedAt: ss.Created}, nil
}

// Streams lists the key's v2 streams, oldest first.
func (h *Hub) Streams(ctx context.Context, id Identity) ([]StreamItem, error) {
	all, err := h.o.Store.List(ctx, id.KeyID)
	if err != nil {
		return nil, err
	}
	out := []StreamItem{}
	for _, ss := range sortByCreated(all) {
		if ss.Kind != KindV2 {
			continue
		}
		conn := ss.Connected()
		v := StreamItem{StreamID: ss.ID, ID: ss.Seq, CreatedAt: ss.Created, TransfersUsed: ss.Used, IsConnected: conn}
		// The session's seen time is the last time a connection claimed or saved it (connect,
		// checkpoint, disconnect); before any connection it is only the creation time, so the
		// stream has been active once one serves it now or a save has left a cursor.
		if conn || ss.HasCursor {
			seen := ss.LastSeen
			v.LastActive = &seen
		}
		out = append(out, v)
	}
	return out, nil
}

func sortByCreated(ss []store.Session) []store.Session {
	slices.SortFunc(ss, func(a, b store.Session) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return ss
}

// NextRenewal is when the key's monthly stream quota renews.
func (h *Hub) NextRenewal(id Identity) time.Time {
	return h.o.Store.WindowAt(id.KeyID, h.o.Now()).MonthEnd
}
