package indexer_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/ingest/internal/rpctest"
	"github.com/chainintel/chainintel/sim"
	"google.golang.org/protobuf/proto"
)

// crashOnce keeps what it is given and fails its first call after keeping it, as a process
// that dies between publishing a round and committing its cursor.
type crashOnce struct {
	rounds [][]eventbus.Event
}

func (c *crashOnce) Publish(_ context.Context, ev ...eventbus.Event) error {
	c.rounds = append(c.rounds, append([]eventbus.Event(nil), ev...))
	if len(c.rounds) == 1 {
		return errCrash
	}
	return nil
}

// TestEventIDsSharedWithSimulatorAndStableOnReindex indexes mainnet block 18,000,000, crashing
// after the first publication so the block is indexed again: every fact of the second round has
// the id it had in the first (so consumers that de-duplicate on it drop the copy), and the
// simulator, publishing the same facts, gives them the same ids as the indexer.
func TestEventIDsSharedWithSimulatorAndStableOnReindex(t *testing.T) {
	m := rpctest.LoadMainnet(t)
	base := m.Handler(t, true)
	h := func(method string, params []json.RawMessage) (any, *rpctest.Error) {
		switch method {
		case "eth_getCode":
			return "0x8063a9059cbb1461000b5760006000fd5b00", nil
		case "eth_getStorageAt":
			return "0x" + strings.Repeat("0", 64), nil
		}
		return base(method, params)
	}
	// Its own chain: the package's tests share one database.
	r := newRig(t, "polygon", h)
	pub := &crashOnce{}
	x := r.indexer(pub, m.Number)
	if _, err := x.Step(context.Background()); !errors.Is(err, errCrash) {
		t.Fatalf("first round: %v", err)
	}
	if _, err := x.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(pub.rounds) != 2 {
		t.Fatalf("%d rounds published; want the block twice", len(pub.rounds))
	}
	first, again := ids(t, pub.rounds[0]), ids(t, pub.rounds[1])
	if len(first) == 0 || len(again) != len(first) {
		t.Fatalf("%d facts published, %d when indexed again", len(first), len(again))
	}
	for k, id := range first {
		if again[k] != id {
			t.Errorf("%s: id %q, %q when indexed again", k, id, again[k])
		}
	}

	var b sim.Batch
	topics := map[string]int{}
	for _, e := range pub.rounds[0] {
		topics[e.Topic]++
		switch msg := e.Msg.(type) {
		case *eventsv1.Transaction:
			b.Transactions = append(b.Transactions, msg)
		case *eventsv1.Transfer:
			b.Transfers = append(b.Transfers, msg)
		case *eventsv1.Swap:
			b.Swaps = append(b.Swaps, msg)
		case *eventsv1.Contract:
			b.Contracts = append(b.Contracts, msg)
		case *eventsv1.Token:
			b.Tokens = append(b.Tokens, msg)
		}
	}
	for _, tp := range []string{eventsv1.TopicTransactions, eventsv1.TopicTransfers, eventsv1.TopicSwaps, eventsv1.TopicContracts, eventsv1.TopicTokens} {
		if topics[tp] == 0 {
			t.Errorf("fixture: nothing published on %s", tp)
		}
	}
	simIDs := ids(t, b.Events())
	if len(simIDs) != b.Len() {
		t.Fatalf("simulator: %d ids for %d facts", len(simIDs), b.Len())
	}
	for k, id := range simIDs {
		if first[k] != id {
			t.Errorf("%s: indexer id %q, simulator id %q", k, first[k], id)
		}
	}
}

// ids maps each fact ("<topic> <record key> <payload digest>") to its event id, failing on an empty
// id or on two facts of a round sharing one.
func ids(t *testing.T, ev []eventbus.Event) map[string]string {
	t.Helper()
	out := map[string]string{}
	seen := map[string]bool{}
	for _, e := range ev {
		if e.Topic == eventsv1.TopicBalances {
			continue
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(e.Msg)
		if err != nil {
			t.Fatal(err)
		}
		if e.ID == "" || seen[e.ID] {
			t.Fatalf("%s %s: empty or repeated id %q", e.Topic, e.Key, e.ID)
		}
		seen[e.ID] = true
		out[fmt.Sprintf("%s %s %x", e.Topic, e.Key, sha256.Sum256(b))] = e.ID
	}
	return out
}
