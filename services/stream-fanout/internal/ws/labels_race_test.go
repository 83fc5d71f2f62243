package ws

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/render"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
)

type staticLabels struct{ b Book }

func (l staticLabels) Book(context.Context) (Book, error) { return l.b, nil }
func (l staticLabels) Entities(context.Context, []string) (map[string]ulclient.UserEntity, error) {
	return map[string]ulclient.UserEntity{}, nil
}
func (l staticLabels) Additions(context.Context, []string) (map[string]map[string][]string, error) {
	return map[string]map[string][]string{}, nil
}

// A reconnect message on a live connection detaches its session on the reader's goroutine,
// rendering what is still unsent (renderUnsent) while the writer delivers transfers
// (transferJSON): renderUnsent must leave the writer's cached book (c.bookE, c.bookGen)
// alone. Run with -race.
func TestRenderOffTheWriterLeavesItsBookAlone(t *testing.T) {
	h := NewHub(Options{Labels: staticLabels{Book{Labels: map[render.AddrKey]string{{ChainType: "evm", Address: "0xabc"}: "mine"}}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &conn{h: h, ctx: ctx, cancel: cancel, id: Identity{UserID: "u1", KeyID: "k1"}}
	r := &engine.Rendered{JSON: []byte(`{}`)}
	it := engine.Item{R: r, FilterID: "f1"}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the writer
		defer wg.Done()
		for i := 0; i < 200; i++ {
			c.transferJSON(r, time.Now())
			h.Forget("u1") // the writer's next delivery reads the book again
		}
	}()
	go func() { // the reader, detaching on a reconnect
		defer wg.Done()
		for i := 0; i < 200; i++ {
			if b := c.renderUnsent(nil, []engine.Item{it}); len(b) != 1 || len(b[0]) == 0 {
				t.Error("renderUnsent returned nothing")
				return
			}
		}
	}()
	wg.Wait()
}
