package service

import (
	"bytes"
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
)

// topicState is what a test reads back of a topic: partitions and cleanup.policy.
type topicState struct {
	Partitions int
	Policy     string
}

func describeTopics(t *testing.T, brokers []string) map[string]topicState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// Its own transport: the default one serves metadata from a cache.
	c := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second, Transport: &kafka.Transport{}}
	md, err := c.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]topicState{}
	req := &kafka.DescribeConfigsRequest{}
	for _, tp := range md.Topics {
		out[tp.Name] = topicState{Partitions: len(tp.Partitions)}
		req.Resources = append(req.Resources, kafka.DescribeConfigRequestResource{
			ResourceType: kafka.ResourceTypeTopic, ResourceName: tp.Name, ConfigNames: []string{"cleanup.policy"}})
	}
	resp, err := c.DescribeConfigs(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.Resources {
		s := out[r.ResourceName]
		for _, e := range r.ConfigEntries {
			if e.ConfigName == "cleanup.policy" {
				s.Policy = e.ConfigValue
			}
		}
		out[r.ResourceName] = s
	}
	return out
}

// TestEnsureTopicsCreatesMissingCompactedAndDLQ: the migrate step creates every topic with its
// .dlq, compacted topics compacted, with the configured partitions; run again it changes
// nothing, and an existing topic that should be compacted but is not is left alone and warned
// about.
func TestEnsureTopicsCreatesMissingCompactedAndDLQ(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	k := Kafka{Brokers: c.ListenAddrs(), Partitions: 3, ReplicationFactor: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The state topic exists already, uncompacted (as broker auto-creation makes it).
	if err := eventbus.EnsureTopics(ctx, k.Brokers, eventbus.Security{}, 1, []eventbus.TopicSpec{{Name: "old.state.v1", Partitions: 2}}); err != nil {
		t.Fatal(err)
	}
	compacted := func(topic string) bool { return strings.HasSuffix(topic, ".state.v1") }
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	topics := []string{"new.events.v1", "new.state.v1", "old.state.v1"}
	if err := EnsureTopics(ctx, k, log, compacted, topics...); err != nil {
		t.Fatal(err)
	}
	want := map[string]topicState{
		"new.events.v1":     {Partitions: 3, Policy: "delete"},
		"new.events.v1.dlq": {Partitions: 1, Policy: "delete"},
		"new.state.v1":      {Partitions: 3, Policy: "compact"},
		"new.state.v1.dlq":  {Partitions: 1, Policy: "delete"},
		"old.state.v1":      {Partitions: 2, Policy: "delete"}, // never altered
		"old.state.v1.dlq":  {Partitions: 1, Policy: "delete"},
	}
	if got := describeTopics(t, k.Brokers); !reflect.DeepEqual(got, want) {
		t.Fatalf("topics %v\nwant %v\nlog:\n%s", got, want, logs.String())
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), "topic=old.state.v1") {
		t.Fatalf("want one warning naming old.state.v1; log:\n%s", logs.String())
	}

	logs.Reset()
	if err := EnsureTopics(ctx, k, log, compacted, topics...); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if got := describeTopics(t, k.Brokers); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a second run topics %v\nwant %v", got, want)
	}
	if !strings.Contains(logs.String(), "topics exist already") {
		t.Fatalf("second run created something; log:\n%s", logs.String())
	}
}

// TestCreateTopicsReportsWhatItCreated: only missing topics are asked for, so the report names
// exactly those.
func TestCreateTopicsReportsWhatItCreated(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	specs := []eventbus.TopicSpec{{Name: "a.v1", Partitions: 1}, {Name: "b.v1", Partitions: 1, Compacted: true}}
	rep, err := eventbus.CreateTopics(ctx, c.ListenAddrs(), eventbus.NewSecurity(nil, nil), 1, specs[:1])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.v1", "a.v1.dlq"}; !reflect.DeepEqual(rep.Created, want) || rep.NotCompacted != nil {
		t.Fatalf("first report %+v; want created %v", rep, want)
	}
	rep, err = eventbus.CreateTopics(ctx, c.ListenAddrs(), eventbus.NewSecurity(nil, nil), 1, specs)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b.v1", "b.v1.dlq"}; !reflect.DeepEqual(rep.Created, want) || rep.NotCompacted != nil {
		t.Fatalf("second report %+v; want created %v", rep, want)
	}
}

func TestEnsureTopicsRefusesZeroSizes(t *testing.T) {
	for _, k := range []Kafka{{Brokers: []string{"127.0.0.1:1"}, Partitions: 0, ReplicationFactor: 1}, {Brokers: []string{"127.0.0.1:1"}, Partitions: 1}} {
		err := EnsureTopics(context.Background(), k, nil, func(string) bool { return false }, "x.v1")
		if err == nil || !strings.Contains(err.Error(), "KAFKA_") {
			t.Errorf("%+v: error %v; want one naming the variable", k, err)
		}
	}
}
