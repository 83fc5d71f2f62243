package events_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/balances/internal/events"
	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// reorgWriter records the reorgs it is asked to apply and answers each with the next result.
type reorgWriter struct {
	events.Writer
	results []store.ReorgResult
	froms   []int64
}

func (w *reorgWriter) ApplyReorg(_ context.Context, _ string, from int64, _, _ []string) (store.ReorgResult, error) {
	w.froms = append(w.froms, from)
	r := w.results[0]
	w.results = w.results[1:]
	return r, nil
}

// A reorg is applied from the lowest block it names (orphaned or canonical again); one that
// reached pruned history, by its rows or by its blocks alone, is warned about and counted, the
// others are not.
func TestReorgPastPrunedWarnsAndCounts(t *testing.T) {
	w := &reorgWriter{results: []store.ReorgResult{{PastPruned: true}, {BeforeHorizon: 2}, {Voided: 1}}}
	var logs bytes.Buffer
	var deep []string
	h := events.Handlers{W: w, Log: slog.New(slog.NewTextHandler(&logs, nil)), DeepReorg: func(_ context.Context, chain string) { deep = append(deep, chain) }}
	msg := func(chain string, orphaned, canonical []*eventsv1.Reorg_Block) eventbus.Message[*eventsv1.Reorg] {
		return eventbus.Message[*eventsv1.Reorg]{Msg: &eventsv1.Reorg{Chain: chain, CommonAncestorNumber: 9, Orphaned: orphaned, Canonical: canonical}}
	}
	err := h.Reorgs(context.Background(), []eventbus.Message[*eventsv1.Reorg]{
		msg("ethereum", []*eventsv1.Reorg_Block{{Number: 12, Hash: "0xc"}, {Number: 11, Hash: "0xb"}}, []*eventsv1.Reorg_Block{{Number: 10, Hash: "0xa"}}),
		msg("bitcoin", []*eventsv1.Reorg_Block{{Number: 700, Hash: "0x1"}, {Number: 0, Hash: "0x2"}}, nil),
		msg("ethereum", []*eventsv1.Reorg_Block{{Number: 30, Hash: ""}}, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.froms) != 3 || w.froms[0] != 10 || w.froms[1] != 700 || w.froms[2] != 0 {
		t.Fatalf("applied from %v, want [10 700 0]", w.froms)
	}
	if strings.Join(deep, " ") != "ethereum bitcoin" {
		t.Fatalf("counted %v, want [ethereum bitcoin]", deep)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 || !strings.Contains(logs.String(), "past_pruned_blocks=true") {
		t.Fatalf("%d warnings in\n%s", n, logs.String())
	}
}
