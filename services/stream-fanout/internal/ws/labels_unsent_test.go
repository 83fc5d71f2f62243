package ws

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chainintel/chainintel/libs/httpx"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

// ownerLabels is user-labels with one label, of user u1, and a count of books read.
type ownerLabels struct{ reads atomic.Int32 }

func (l *ownerLabels) Book(ctx context.Context) (Book, error) {
	l.reads.Add(1)
	if id, _ := httpx.IdentityFrom(ctx); id.UserID != "u1" {
		return Book{}, nil
	}
	return Book{Labels: map[render.AddrKey]string{{ChainType: "evm", Address: labelledAddr}: "my desk"}}, nil
}

func (l *ownerLabels) Entities(context.Context, []string) (map[string]ulclient.UserEntity, error) {
	return map[string]ulclient.UserEntity{}, nil
}

func (l *ownerLabels) Additions(context.Context, []string) (map[string]map[string][]string, error) {
	return map[string]map[string][]string{}, nil
}

const labelledAddr = "0x00000000000000000000000000000000000000aa"

func unsentItem(from string) engine.Item {
	r := &engine.Rendered{T: render.TransferOf(&eventsv1.Transfer{Id: "t", Chain: "ethereum", From: from,
		To: "0x00000000000000000000000000000000000000bb", Amount: "1"}, nil, nil)}
	r.JSON = render.JSON(&r.T)
	return engine.Item{R: r, FilterID: "f1"}
}

// What a detaching connection saves for its replay carries its caller's own labels, read
// from a book looked up once for all of it (here the cache keeps nothing, so every lookup is
// a read), and another caller's saved transfers carry none of them.
func TestRenderUnsentLooksUpTheBookOnce(t *testing.T) {
	ul := &ownerLabels{}
	h := NewHub(Options{Labels: ul})
	h.labels = newLabelCache(-1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	items := []engine.Item{unsentItem(labelledAddr), unsentItem(labelledAddr), unsentItem("0x00000000000000000000000000000000000000cc")}

	owner := &conn{h: h, ctx: ctx, id: Identity{UserID: "u1", KeyID: "k1"}}
	raw := owner.renderUnsent([][]byte{[]byte("kept")}, items)
	if ul.reads.Load() != 1 {
		t.Fatalf("%d books read for %d unsent transfers, want 1", ul.reads.Load(), len(items))
	}
	if len(raw) != 4 || string(raw[0]) != "kept" {
		t.Fatalf("got %d messages (first %q), want what was given and one per transfer", len(raw), raw[0])
	}
	for i, m := range raw[1:3] {
		if !strings.Contains(string(m), `"my desk"`) {
			t.Fatalf("unsent transfer %d lacks the owner's label: %s", i, m)
		}
	}
	if want := appendTransfer(nil, "f1", items[2].R.JSON); !bytes.Equal(raw[3], want) {
		t.Fatalf("a transfer without the owner's addresses: %s, want the shared rendering %s", raw[3], want)
	}

	other := &conn{h: h, ctx: ctx, id: Identity{UserID: "u2", KeyID: "k2"}}
	for _, m := range other.renderUnsent(nil, items) {
		if strings.Contains(string(m), "my desk") {
			t.Fatalf("another caller's replay carries the owner's label: %s", m)
		}
	}
	if n := len(owner.renderUnsent(nil, nil)); n != 0 || ul.reads.Load() != 2 {
		t.Fatalf("nothing unsent: %d messages, %d books read in all; want none and no read (2)", n, ul.reads.Load())
	}
}
