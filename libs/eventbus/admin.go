package eventbus

import (
	"context"
	"errors"
	"fmt"
	"net"
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
	if len(brokers) == 0 {
		return errors.New("no Kafka brokers configured")
	}
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 15 * time.Second, Transport: sec.Transport()}
	// Asked first because its error is the connection's (a TLS or SASL failure): CreateTopics
	// goes to the controller, which kafka-go reports only as "Broker Not Available" when no
	// connection could be made.
	if _, err := client.Metadata(ctx, &kafka.MetadataRequest{}); err != nil {
		return fmt.Errorf("kafka brokers %v: %w", brokers, sec.explain(err))
	}
	var topics []kafka.TopicConfig
	for _, s := range specs {
		cfg := kafka.TopicConfig{Topic: s.Name, NumPartitions: s.Partitions, ReplicationFactor: rf}
		if s.Compacted {
			cfg.ConfigEntries = []kafka.ConfigEntry{{ConfigName: "cleanup.policy", ConfigValue: "compact"}}
		}
		topics = append(topics, cfg, kafka.TopicConfig{Topic: s.Name + ".dlq", NumPartitions: 1, ReplicationFactor: rf})
	}
	resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: topics})
	if err != nil {
		return fmt.Errorf("create topics: %w (are the brokers %v reachable?)", err, brokers)
	}
	var errs []error
	for name, terr := range resp.Errors {
		if terr != nil && !errors.Is(terr, kafka.TopicAlreadyExists) {
			errs = append(errs, fmt.Errorf("create topic %s: %w", name, terr))
		}
	}
	return errors.Join(errs...)
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
