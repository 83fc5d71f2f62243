package stack

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/promscrape"
	"github.com/chainintel/chainintel/libs/service"
)

// The backlog column: every progress job but ingest's, with what is left and its ETA (unknown
// while nothing is applied), and the largest hour close lag over the chains.
func TestBacklogText(t *testing.T) {
	samples, err := promscrape.Parse(strings.NewReader(`
progress_remaining{task="balances.apply",unit="observations"} 1200
progress_eta_seconds{task="balances.apply",unit="observations"} 90
progress_remaining{task="transfers.rollups",unit="rows"} 5
progress_eta_seconds{task="transfers.rollups",unit="rows"} -1
progress_remaining{chain="ethereum",task="ingest",unit="blocks"} 40
token_analytics_close_lag_seconds{chain="base"} 1800
token_analytics_close_lag_seconds{chain="ethereum"} 4500.5
`))
	if err != nil {
		t.Fatal(err)
	}
	got := backlogText(samples)
	want := []string{
		"balances.apply 1200 left, eta 1m30s",
		"hour close lag 1h15m0s (ethereum, the largest of 2 chains)",
		"transfers.rollups 5 left, eta unknown",
	}
	if !slices.Equal(got, want) {
		t.Errorf("backlog %q, want %q", got, want)
	}
	if got := backlogText(nil); len(got) != 0 {
		t.Errorf("no metrics: %q", got)
	}
}

// A chain whose indexing rounds keep failing (its node unreachable) shows it instead of an ETA
// computed from the last good round's figures; a chain with reorgs shows how many.
func TestChainTextFailing(t *testing.T) {
	got := chainText(map[string]ChainPosition{
		"ethereum": {Cursor: 700, Behind: 12, ETASeconds: 0, FailingRounds: 3},
		"base":     {Cursor: 50, Behind: 0, ETASeconds: 0, Reorgs: 2},
	})
	want := "base block 50, 0 behind, eta 0s, 2 reorgs since start; ethereum block 700, 12 behind, FAILING (3 rounds in a row; see LAST ERROR)"
	if got != want {
		t.Errorf("chains %q, want %q", got, want)
	}
}

// An outbox with rows not yet published shows in the backlog with its oldest row's age (a
// relay that cannot publish shows nowhere else: no consumer lag grows), and so do the stream
// feed's lag over its partitions and the edge's queued usage events; each is left out at 0.
func TestBacklogTextQueues(t *testing.T) {
	samples, err := promscrape.Parse(strings.NewReader(`
outbox_pending_rows{outbox="market.outbox"} 42
outbox_oldest_pending_age_seconds{outbox="market.outbox"} 600
outbox_pending_rows{outbox="userdata.outbox"} 0
outbox_oldest_pending_age_seconds{outbox="userdata.outbox"} 0
stream_feed_lag{partition="0"} 3
stream_feed_lag{partition="1"} 4
edge_usage_events_queued 17
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"outbox market.outbox 42 unpublished, oldest 10m0s",
		"stream feed 7 records behind",
		"usage events 17 queued",
	}
	if got := backlogText(samples); !slices.Equal(got, want) {
		t.Errorf("backlog %q, want %q", got, want)
	}
	idle, err := promscrape.Parse(strings.NewReader(`
outbox_pending_rows{outbox="market.outbox"} 0
stream_feed_lag{partition="0"} 0
edge_usage_events_queued 0
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := backlogText(idle); len(got) != 0 {
		t.Errorf("idle queues: %q", got)
	}
}

// The KAFKA column: "-" without consumers, ok while the lag is read, UNREACHABLE once the
// oldest lag read is over a minute old, with the last broker error; a stale lag is marked.
func TestKafkaText(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	recent, old := now.Add(-5*time.Second), now.Add(-3*time.Minute)
	e := &eventbus.BrokerError{Time: now.Add(-time.Second), Topic: "chain.transfers.v1", Op: "fetch", Error: "dial tcp: connection refused"}
	pe := &eventbus.BrokerError{Time: now.Add(-time.Second), Topic: "usage.events.v1", Op: "publish", Error: "dial tcp: connection refused"}
	for _, c := range []struct {
		k    *service.KafkaStatus
		want string
	}{
		{nil, "-"},
		{&service.KafkaStatus{Consumers: 1}, "starting"},
		{&service.KafkaStatus{Consumers: 1, LagReadAt: &recent}, "ok"},
		{&service.KafkaStatus{Consumers: 2, LagReadAt: &old, LastError: e},
			"UNREACHABLE (lag last read 3m0s ago); last error 2026-01-02T03:04:04Z chain.transfers.v1 fetch: dial tcp: connection refused"},
		{&service.KafkaStatus{Consumers: 1, LastError: e},
			"UNREACHABLE (lag never read); last error 2026-01-02T03:04:04Z chain.transfers.v1 fetch: dial tcp: connection refused"},
		{&service.KafkaStatus{Publishers: 1}, "ok"},
		{&service.KafkaStatus{Publishers: 1, PublishError: pe, PublishedAt: &old},
			"PUBLISH FAILING; last error 2026-01-02T03:04:04Z usage.events.v1 publish: dial tcp: connection refused"},
		{&service.KafkaStatus{Publishers: 1, PublishError: pe, PublishedAt: &now},
			"ok; last error 2026-01-02T03:04:04Z usage.events.v1 publish: dial tcp: connection refused"},
		{&service.KafkaStatus{Consumers: 1, Publishers: 1, PublishError: pe},
			"starting, PUBLISH FAILING; last error 2026-01-02T03:04:04Z usage.events.v1 publish: dial tcp: connection refused"},
		{&service.KafkaStatus{Consumers: 1, Publishers: 1, LastError: e, PublishError: pe},
			"UNREACHABLE (lag never read), PUBLISH FAILING; last error 2026-01-02T03:04:04Z chain.transfers.v1 fetch: dial tcp: connection refused"},
	} {
		if got := kafkaText(c.k, now); got != c.want {
			t.Errorf("kafkaText(%+v) = %q, want %q", c.k, got, c.want)
		}
	}
	got := lagText(map[string]float64{"a.v1": 5, "b.v1": 7}, map[string]float64{"a.v1": 3, "b.v1": 200})
	if want := "a.v1=5 b.v1=7 (STALE: read 3m20s ago)"; got != want {
		t.Errorf("lagText = %q, want %q", got, want)
	}
}
