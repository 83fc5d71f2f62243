package eventbus

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"
)

// WriteRows skips tombstones and the records row rejects, writes the rest in record order in one
// call (an empty one too), and returns write's error so the consumer retries the batch.
func TestWriteRows(t *testing.T) {
	var calls [][]int
	fail := errors.New("database down")
	var writeErr error
	h := WriteRows(func(m Message[*wrapperspb.StringValue]) (int, bool) {
		n, err := strconv.Atoi(m.Msg.Value)
		return n, err == nil
	}, func(_ context.Context, rows []int) error {
		calls = append(calls, rows)
		return writeErr
	})
	msg := func(v string) Message[*wrapperspb.StringValue] {
		return Message[*wrapperspb.StringValue]{Msg: wrapperspb.String(v)}
	}
	tomb := Message[*wrapperspb.StringValue]{Msg: wrapperspb.String("7"), Tombstone: true}
	if err := h(context.Background(), []Message[*wrapperspb.StringValue]{msg("3"), tomb, msg("x"), msg("1")}); err != nil {
		t.Fatal(err)
	}
	if err := h(context.Background(), []Message[*wrapperspb.StringValue]{tomb}); err != nil {
		t.Fatal(err)
	}
	writeErr = fail
	if err := h(context.Background(), []Message[*wrapperspb.StringValue]{msg("2")}); !errors.Is(err, fail) {
		t.Fatalf("write's error lost: %v", err)
	}
	if len(calls) != 3 || !slices.Equal(calls[0], []int{3, 1}) || len(calls[1]) != 0 || !slices.Equal(calls[2], []int{2}) {
		t.Fatalf("writes %v", calls)
	}
}
