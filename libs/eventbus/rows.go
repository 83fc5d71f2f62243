package eventbus

import (
	"context"

	"google.golang.org/protobuf/proto"
)

// WriteRows returns the handler of a consumer that turns each record into at most one row and
// writes a batch's rows in one call: row maps a record (ok false skips it; tombstones are skipped
// before row sees them), then write gets the rows in record order, also when there are none.
// The consumer commits the batch's offsets only after write returns nil and hands it the same
// batch again otherwise, so write must be idempotent.
func WriteRows[M proto.Message, R any](row func(Message[M]) (R, bool), write func(context.Context, []R) error) Handler[M] {
	return func(ctx context.Context, batch []Message[M]) error {
		rows := make([]R, 0, len(batch))
		for _, m := range batch {
			if m.Tombstone {
				continue
			}
			if r, ok := row(m); ok {
				rows = append(rows, r)
			}
		}
		return write(ctx, rows)
	}
}
