package streamfanout_test

import (
	"context"
	"log/slog"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/service"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
	"github.com/segmentio/kafka-go"
)

// TestMigrateCreatesTopics: `stream-fanout migrate` (the chart's hook Job) creates the topics
// the service reads, with their .dlq, the attribution topic compacted (the service reads it
// whole at start), and run again changes nothing.
func TestMigrateCreatesTopics(t *testing.T) {
	b, err := eventbus.StartEmbeddedBroker(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	var cfg streamfanout.Config
	cfg.Kafka = service.Kafka{Brokers: b.Addrs(), Partitions: 2, ReplicationFactor: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := map[string]string{
		"chain.transfers.v1": "delete 2", "chain.transfers.v1.dlq": "delete 1",
		"chain.reorgs.v1": "delete 2", "chain.reorgs.v1.dlq": "delete 1",
		"intel.attributions.v1": "compact 2", "intel.attributions.v1.dlq": "delete 1",
		"usage.calls.v1": "delete 2", "usage.calls.v1.dlq": "delete 1",
		"user.changes.v1": "delete 2", "user.changes.v1.dlq": "delete 1",
	}
	for run := 1; run <= 2; run++ {
		if err := streamfanout.Migrate(ctx, cfg, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if got := topicPolicies(ctx, t, b.Addrs()); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: topics %v\nwant %v", run, got, want)
		}
	}
}

// topicPolicies is "<cleanup.policy> <partitions>" of every topic on the brokers.
func topicPolicies(ctx context.Context, t *testing.T, brokers []string) map[string]string {
	t.Helper()
	// Its own transport: the default one serves metadata from a cache.
	c := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second, Transport: &kafka.Transport{}}
	md, err := c.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]int{}
	req := &kafka.DescribeConfigsRequest{}
	for _, tp := range md.Topics {
		parts[tp.Name] = len(tp.Partitions)
		req.Resources = append(req.Resources, kafka.DescribeConfigRequestResource{
			ResourceType: kafka.ResourceTypeTopic, ResourceName: tp.Name, ConfigNames: []string{"cleanup.policy"}})
	}
	resp, err := c.DescribeConfigs(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range resp.Resources {
		for _, e := range r.ConfigEntries {
			if e.ConfigName == "cleanup.policy" {
				out[r.ResourceName] = e.ConfigValue + " " + strconv.Itoa(parts[r.ResourceName])
			}
		}
	}
	return out
}
