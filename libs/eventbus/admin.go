package eventbus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// TopicSpec describes a topic to create.
type TopicSpec struct {
	Name       string
	Partitions int
	Compacted  bool // cleanup.policy=compact, for keyed state such as attributions
}

// EnsureTopics creates the topics that do not exist yet (and their ".dlq" companions), with
// replication factor rf (use 1 for a single broker), connecting with sec. Existing topics are
// left as they are.
func EnsureTopics(ctx context.Context, brokers []string, sec Security, rf int, specs []TopicSpec) error {
	_, err := CreateTopics(ctx, brokers, sec, rf, specs)
	return err
}

// TopicsReport is what CreateTopics found and did.
type TopicsReport struct {
	// Created are the topics it created, ".dlq" companions included, in the order of specs.
	Created []string
	// NotCompacted are the topics of specs with Compacted that existed already without
	// cleanup.policy compact: consumers that read them whole to build state lose the records
	// the broker's retention deletes. CreateTopics never alters a topic; the operator does.
	NotCompacted []string
}

// CreateTopics is EnsureTopics, reporting which topics it created and which existing topics
// should be compacted but are not. It asks to create only the topics the brokers do not list,
// so a principal allowed to describe but not to create topics passes when they all exist.
func CreateTopics(ctx context.Context, brokers []string, sec Security, rf int, specs []TopicSpec) (TopicsReport, error) {
	var rep TopicsReport
	if len(brokers) == 0 {
		return rep, errors.New("no Kafka brokers configured")
	}
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 15 * time.Second, Transport: sec.Transport()}
	// Asked first also because its error is the connection's (a TLS or SASL failure):
	// CreateTopics goes to the controller, which kafka-go reports only as "Broker Not
	// Available" when no connection could be made.
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return rep, fmt.Errorf("kafka brokers %v: %w", brokers, sec.explain(err))
	}
	exists := map[string]bool{}
	for _, t := range md.Topics {
		// A topic listed with another error (no leader yet, just after its creation) exists.
		exists[t.Name] = !errors.Is(t.Error, kafka.UnknownTopicOrPartition)
	}
	var topics []kafka.TopicConfig
	var compacted []string
	for _, s := range specs {
		if !exists[s.Name] {
			cfg := kafka.TopicConfig{Topic: s.Name, NumPartitions: s.Partitions, ReplicationFactor: rf}
			if s.Compacted {
				cfg.ConfigEntries = []kafka.ConfigEntry{{ConfigName: "cleanup.policy", ConfigValue: "compact"}}
			}
			topics = append(topics, cfg)
		} else if s.Compacted {
			compacted = append(compacted, s.Name)
		}
		if !exists[s.Name+".dlq"] {
			topics = append(topics, kafka.TopicConfig{Topic: s.Name + ".dlq", NumPartitions: 1, ReplicationFactor: rf})
		}
	}
	if rep.Created, err = createMissing(ctx, client, brokers, topics); err != nil {
		return rep, err
	}
	rep.NotCompacted, err = notCompacted(ctx, client, compacted)
	return rep, err
}

// createMissing creates topics, a topic another client created meanwhile counting as done, and
// returns the names it created.
func createMissing(ctx context.Context, client *kafka.Client, brokers []string, topics []kafka.TopicConfig) ([]string, error) {
	if len(topics) == 0 {
		return nil, nil
	}
	resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: topics})
	if err != nil {
		return nil, fmt.Errorf("create topics: %w (are the brokers %v reachable?)", err, brokers)
	}
	var created []string
	var errs []error
	for _, t := range topics {
		terr := resp.Errors[t.Topic]
		switch {
		case terr == nil:
			created = append(created, t.Topic)
		case !errors.Is(terr, kafka.TopicAlreadyExists):
			errs = append(errs, fmt.Errorf("create topic %s: %w", t.Topic, terr))
		}
	}
	return created, errors.Join(errs...)
}

// notCompacted returns those of topics whose cleanup.policy does not include compact.
func notCompacted(ctx context.Context, client *kafka.Client, topics []string) ([]string, error) {
	if len(topics) == 0 {
		return nil, nil
	}
	req := &kafka.DescribeConfigsRequest{}
	for _, t := range topics {
		req.Resources = append(req.Resources, kafka.DescribeConfigRequestResource{
			ResourceType: kafka.ResourceTypeTopic, ResourceName: t, ConfigNames: []string{"cleanup.policy"}})
	}
	resp, err := client.DescribeConfigs(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("describe topic configs: %w", err)
	}
	var out []string
	for _, r := range resp.Resources {
		if r.Error != nil {
			return nil, fmt.Errorf("describe topic %s: %w", r.ResourceName, r.Error)
		}
		policy := ""
		for _, e := range r.ConfigEntries {
			if e.ConfigName == "cleanup.policy" {
				policy = e.ConfigValue
			}
		}
		if !strings.Contains(policy, "compact") {
			out = append(out, r.ResourceName)
		}
	}
	sort.Strings(out)
	return out, nil
}

// WaitForBroker waits until a broker accepts connections or ctx ends.
func WaitForBroker(ctx context.Context, brokers []string) error {
	var last error
	for {
		for _, b := range brokers {
			conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", b)
			if err == nil {
				_ = conn.Close()
				return nil
			}
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafka brokers %v not reachable: %w", brokers, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
