package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicState is what a test reads back of a topic: partitions and cleanup.policy.
type topicState struct {
	Partitions int
	Policy     string
}

func describeTopics(t *testing.T, brokers []string) map[string]topicState {
	t.Helper()
	// Its own transport: the default one serves metadata from a cache.
	return describeTopicsWith(t, brokers, &kafka.Transport{})
}

// describeTopicsWith is describeTopics over transport (one with SASL for a broker with ACLs).
func describeTopicsWith(t *testing.T, brokers []string, transport kafka.RoundTripper) map[string]topicState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second, Transport: transport}
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
// nothing, and an existing topic that should be compacted but is not, with fewer partitions
// than configured, is left alone and warned about.
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
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 || strings.Count(logs.String(), "topic=old.state.v1") != 2 ||
		!strings.Contains(logs.String(), "without cleanup.policy=compact") || !strings.Contains(logs.String(), "partitions=2 want=3") {
		t.Fatalf("want two warnings naming old.state.v1, its policy and its partitions; log:\n%s", logs.String())
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

// warnings returns the warnings of a JSON log, one line per warning: its topic, what it is
// about, and for a topic not created the settings it names.
func warnings(t *testing.T, logs *bytes.Buffer) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r["level"] != "WARN" {
			continue
		}
		msg, _ := r["msg"].(string)
		w := fmt.Sprint(r["topic"], ": ", msg)
		switch {
		case strings.Contains(msg, "lacks CREATE on the cluster or the topic"):
			w = fmt.Sprintf("%v: no CREATE, partitions=%v replicationFactor=%v cleanup.policy=%v", r["topic"], r["partitions"], r["replicationFactor"], r["cleanup.policy"])
		case strings.Contains(msg, "lacks DESCRIBE_CONFIGS on the topic"):
			w = fmt.Sprint(r["topic"], ": no DESCRIBE_CONFIGS")
		}
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// TestEnsureTopicsWithoutCreatePermission: a managed Kafka set up by hand, where the services'
// user may describe the topics but neither create topics nor describe their configs, and the
// .dlq topics and a new topic are missing. The brokers answer TOPIC_AUTHORIZATION_FAILED to
// both requests; migrate succeeds, warning about every missing topic with its settings and
// about the compacted topic whose policy it could not read, and creates nothing.
func TestEnsureTopicsWithoutCreatePermission(t *testing.T) {
	describe := kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: "*", Pattern: kmsg.ACLResourcePatternTypeLiteral,
		Operation: kmsg.ACLOperationDescribe, Allow: true}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "old.events.v1", "old.state.v1"),
		kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser("SCRAM-SHA-256", "admin", "admin-pw"),
		kfake.User("SCRAM-SHA-256", "svc", "svc-pw", describe))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	k := Kafka{Brokers: c.ListenAddrs(), Partitions: 3, ReplicationFactor: 1,
		SASLMechanism: SASLScramSHA256, SASLUsername: "svc", SASLPassword: "svc-pw"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	compacted := func(topic string) bool { return strings.HasSuffix(topic, ".state.v1") }
	if err := EnsureTopics(ctx, k, log, compacted, "old.events.v1", "old.state.v1", "new.events.v1"); err != nil {
		t.Fatalf("migrate without CREATE: %v; want success with warnings\nlog:\n%s", err, logs.String())
	}
	want := []string{
		"new.events.v1.dlq: no CREATE, partitions=1 replicationFactor=1 cleanup.policy=delete",
		"new.events.v1: no CREATE, partitions=3 replicationFactor=1 cleanup.policy=delete",
		"old.events.v1.dlq: no CREATE, partitions=1 replicationFactor=1 cleanup.policy=delete",
		"old.state.v1.dlq: no CREATE, partitions=1 replicationFactor=1 cleanup.policy=delete",
		"old.state.v1: no DESCRIBE_CONFIGS",
	}
	if got := warnings(t, &logs); !reflect.DeepEqual(got, want) {
		t.Fatalf("warnings\n%s\nwant\n%s\nlog:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), logs.String())
	}
	admin := k
	admin.SASLUsername, admin.SASLPassword = "admin", "admin-pw"
	sec, err := admin.Security()
	if err != nil {
		t.Fatal(err)
	}
	defer sec.Close()
	wantTopics := map[string]topicState{"old.events.v1": {Partitions: 3, Policy: "delete"}, "old.state.v1": {Partitions: 3, Policy: "delete"}}
	if got := describeTopicsWith(t, k.Brokers, sec.Transport()); !reflect.DeepEqual(got, wantTopics) {
		t.Fatalf("topics %v; want the two there were", got)
	}

	// eventbus.EnsureTopics, for tools that go on to use the topics, fails instead.
	svc, err := k.Security()
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	err = eventbus.EnsureTopics(ctx, k.Brokers, svc, 1, []eventbus.TopicSpec{{Name: "new.events.v1", Partitions: 3}})
	if !errors.Is(err, kafka.TopicAuthorizationFailed) {
		t.Fatalf("eventbus.EnsureTopics without CREATE: %v; want TOPIC_AUTHORIZATION_FAILED", err)
	}
}

// answerCreateTopics answers a CreateTopics request with code for every topic.
func answerCreateTopics(code kafka.Error) func(kmsg.Request) (kmsg.Response, error, bool) {
	return func(r kmsg.Request) (kmsg.Response, error, bool) {
		req := r.(*kmsg.CreateTopicsRequest)
		resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
		for _, tp := range req.Topics {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode = tp.Topic, int16(code)
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil, true
	}
}

// answerDescribeConfigs answers a DescribeConfigs request with code for every resource.
func answerDescribeConfigs(code kafka.Error) func(kmsg.Request) (kmsg.Response, error, bool) {
	return func(r kmsg.Request) (kmsg.Response, error, bool) {
		req := r.(*kmsg.DescribeConfigsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
		for _, res := range req.Resources {
			rr := kmsg.NewDescribeConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = res.ResourceType, res.ResourceName, int16(code)
			resp.Resources = append(resp.Resources, rr)
		}
		return resp, nil, true
	}
}

// counting counts the requests of key c handles, leaving them to the next control function or
// to the cluster.
func counting(c *kfake.Cluster, key kmsg.Key) *atomic.Int32 {
	var n atomic.Int32
	c.ControlKey(key.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		n.Add(1)
		return nil, nil, false
	})
	return &n
}

// TestEnsureTopicsClusterAuthorizationFailed: CLUSTER_AUTHORIZATION_FAILED, injected as the
// answer to every CreateTopics and DescribeConfigs request, is a warning like the topic's, asked
// once, and migrate succeeds.
func TestEnsureTopicsClusterAuthorizationFailed(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "a.state.v1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	creates, describes := counting(c, kmsg.CreateTopics), counting(c, kmsg.DescribeConfigs)
	for key, answer := range map[kmsg.Key]func(kmsg.Request) (kmsg.Response, error, bool){
		kmsg.CreateTopics:    answerCreateTopics(kafka.ClusterAuthorizationFailed),
		kmsg.DescribeConfigs: answerDescribeConfigs(kafka.ClusterAuthorizationFailed),
	} {
		c.ControlKey(key.Int16(), func(r kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			return answer(r)
		})
	}
	k := Kafka{Brokers: c.ListenAddrs(), Partitions: 2, ReplicationFactor: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	if err := EnsureTopics(ctx, k, log, func(string) bool { return true }, "a.state.v1", "b.state.v1"); err != nil {
		t.Fatalf("migrate: %v; want success with warnings\nlog:\n%s", err, logs.String())
	}
	want := []string{
		"a.state.v1.dlq: no CREATE, partitions=1 replicationFactor=1 cleanup.policy=delete",
		"a.state.v1: no DESCRIBE_CONFIGS",
		"b.state.v1.dlq: no CREATE, partitions=1 replicationFactor=1 cleanup.policy=delete",
		"b.state.v1: no CREATE, partitions=2 replicationFactor=1 cleanup.policy=compact",
	}
	if got := warnings(t, &logs); !reflect.DeepEqual(got, want) {
		t.Fatalf("warnings\n%s\nwant\n%s\nlog:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), logs.String())
	}
	if n, m := creates.Load(), describes.Load(); n != 1 || m != 1 {
		t.Fatalf("%d CreateTopics and %d DescribeConfigs requests; an authorization error is not retried", n, m)
	}
}

// TestEnsureTopicsRetriesTransientErrors: a NOT_CONTROLLER answer to CreateTopics and a
// REQUEST_TIMED_OUT one to DescribeConfigs, each injected once, are asked again and migrate
// succeeds with everything created and checked; a NOT_CONTROLLER answer to every CreateTopics
// fails it after a few attempts.
func TestEnsureTopicsRetriesTransientErrors(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "a.state.v1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	creates, describes := counting(c, kmsg.CreateTopics), counting(c, kmsg.DescribeConfigs)
	c.ControlKey(kmsg.CreateTopics.Int16(), answerCreateTopics(kafka.NotController))
	c.ControlKey(kmsg.DescribeConfigs.Int16(), answerDescribeConfigs(kafka.RequestTimedOut))
	k := Kafka{Brokers: c.ListenAddrs(), Partitions: 2, ReplicationFactor: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	if err := EnsureTopics(ctx, k, log, func(string) bool { return true }, "a.state.v1", "b.state.v1"); err != nil {
		t.Fatalf("migrate: %v\nlog:\n%s", err, logs.String())
	}
	if got, want := warnings(t, &logs), []string{"a.state.v1: topic exists without cleanup.policy=compact: consumers that read it whole lose what retention deletes; set it with kafka-configs --alter --entity-type topics --entity-name a.state.v1 --add-config cleanup.policy=compact"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("warnings %q; want %q", got, want)
	}
	if n, m := creates.Load(), describes.Load(); n != 2 || m != 2 {
		t.Fatalf("%d CreateTopics and %d DescribeConfigs requests; want each asked again once", n, m)
	}
	wantTopics := map[string]topicState{
		"a.state.v1": {Partitions: 2, Policy: "delete"}, "a.state.v1.dlq": {Partitions: 1, Policy: "delete"},
		"b.state.v1": {Partitions: 2, Policy: "compact"}, "b.state.v1.dlq": {Partitions: 1, Policy: "delete"},
	}
	if got := describeTopics(t, k.Brokers); !reflect.DeepEqual(got, wantTopics) {
		t.Fatalf("topics %v; want %v", got, wantTopics)
	}

	creates.Store(0)
	c.ControlKey(kmsg.CreateTopics.Int16(), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return answerCreateTopics(kafka.NotController)(r)
	})
	err = EnsureTopics(ctx, k, log, func(string) bool { return false }, "c.v1")
	if !errors.Is(err, kafka.NotController) || creates.Load() != 5 {
		t.Fatalf("migrate against a controller that keeps moving: %v after %d requests; want NOT_CONTROLLER after 5", err, creates.Load())
	}
}

// TestEnsureTopicsFailsOnOtherErrors: an error that is neither transient nor an authorization
// one (a replication factor the brokers cannot meet) fails migrate at once, naming the topic.
func TestEnsureTopicsFailsOnOtherErrors(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	creates := counting(c, kmsg.CreateTopics)
	k := Kafka{Brokers: c.ListenAddrs(), Partitions: 1, ReplicationFactor: 3}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = EnsureTopics(ctx, k, nil, func(string) bool { return false }, "a.v1")
	if !errors.Is(err, kafka.InvalidReplicationFactor) || !strings.Contains(err.Error(), "create topic a.v1:") || creates.Load() != 1 {
		t.Fatalf("migrate with replication 3 on one broker: %v after %d requests; want INVALID_REPLICATION_FACTOR naming a.v1 at once", err, creates.Load())
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
