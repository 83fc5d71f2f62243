package indexer_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/services/ingest/internal/chaintest"
	"github.com/chainintel/chainintel/services/ingest/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

var quiet = chaintest.Quiet

var chainTopics = chaintest.Topics

type sink = chaintest.Sink

func startSink(t *testing.T, brokers []string) *sink { return chaintest.StartSink(t, brokers) }

func eventually(t *testing.T, timeout time.Duration, check func() error) {
	chaintest.Eventually(t, timeout, check)
}

// flakyPublisher publishes, then fails every n-th call after the events were written, as a
// process dying between Kafka's acknowledgement and the cursor commit would.
type flakyPublisher struct {
	p     *eventbus.Publisher
	every int
	calls int
}

var errCrash = errors.New("simulated crash after publish")

func (f *flakyPublisher) Publish(ctx context.Context, ev ...eventbus.Event) error {
	if err := f.p.Publish(ctx, ev...); err != nil {
		return err
	}
	f.calls++
	if f.every > 0 && f.calls%f.every == 0 {
		return errCrash
	}
	return nil
}
