package ws

import (
	"context"
	"errors"
	"testing"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
)

// TestNamesWhileLoading: while the read model loads, a new filter naming an entity or type it
// does not hold yet is refused for now (ErrNamesLoading: INTERNAL_ERROR, retry), not as
// invalid; one it holds, a documented type and an address are accepted. Once loaded the unknown
// name is an INVALID_FILTER. A stored filter (a resume) is not checked against the model.
func TestNamesWhileLoading(t *testing.T) {
	e := engine.New(engine.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = e.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	e.Do(ctx, func() {
		e.SetAttr(engine.AttrKey{ChainType: "evm", Address: "0xabc"}, &render.Attr{Entity: &render.Entity{ID: "exch", Type: "cex"}})
	})
	c := &conn{h: NewHub(Options{Engine: e}), id: Identity{KeyID: "k"}}
	build := func(to string, fresh bool) error {
		_, err := c.build(ctx, "f", filter.Raw{To: filter.List{to}}, fresh)
		return err
	}
	for _, ok := range []string{"exch", "type:cex", "type:fund", "deposit:exch", "0x28c6c06298d514db089934071355e5743bf21d60"} {
		if err := build(ok, true); err != nil {
			t.Errorf("%s while loading: %v", ok, err)
		}
	}
	for _, unknown := range []string{"ghost", "type:zzz", "deposit:ghost"} {
		if err := build(unknown, true); !errors.Is(err, ErrNamesLoading) {
			t.Errorf("%s while loading: %v", unknown, err)
		}
		if err := build(unknown, false); err != nil {
			t.Errorf("%s stored, while loading: %v", unknown, err)
		}
	}
	_, err := c.compileNew(ctx, "f", filter.Raw{To: filter.List{"ghost"}})
	var pe *ProtocolError
	if !errors.As(err, &pe) || *pe != (ProtocolError{Code: CodeInternal, Message: "the replica is still loading its entity read model; retry shortly"}) {
		t.Fatalf("subscribe while loading: %v", err)
	}
	e.Do(ctx, e.SetLoaded)
	_, err = c.compileNew(ctx, "f", filter.Raw{To: filter.List{"ghost"}})
	if !errors.As(err, &pe) || *pe != (ProtocolError{Code: CodeInvalidFilter, Message: `to: unknown entity "ghost"`}) {
		t.Fatalf("subscribe once loaded: %v", err)
	}
	if err := build("ghost", false); err != nil {
		t.Errorf("a stored filter naming an entity gone: %v", err)
	}
}
