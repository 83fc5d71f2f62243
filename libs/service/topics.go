package service

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/chainintel/chainintel/libs/eventbus"
)

// EnsureTopics creates those of topics (and their ".dlq" companions) that the brokers of k do
// not have yet, with k.Partitions partitions and replication factor k.ReplicationFactor, a topic
// for which compacted says true with cleanup.policy compact. It never alters an existing topic:
// one that compacted names but that is not compacted is logged as a warning for the operator to
// fix. Every service's `migrate` calls it with the topics the service produces or consumes (the
// chart's migrate Job runs before the service starts), and the local stack with every topic.
func EnsureTopics(ctx context.Context, k Kafka, log *slog.Logger, compacted func(topic string) bool, topics ...string) error {
	if k.Partitions < 1 {
		return fmt.Errorf("KAFKA_PARTITIONS: %d, want at least 1", k.Partitions)
	}
	if k.ReplicationFactor < 1 {
		return fmt.Errorf("KAFKA_REPLICATION_FACTOR: %d, want at least 1", k.ReplicationFactor)
	}
	sec, err := k.Security()
	if err != nil {
		return err
	}
	defer sec.Close()
	specs := make([]eventbus.TopicSpec, len(topics))
	for i, t := range topics {
		specs[i] = eventbus.TopicSpec{Name: t, Partitions: k.Partitions, Compacted: compacted(t)}
	}
	rep, err := eventbus.CreateTopics(ctx, k.Brokers, sec, k.ReplicationFactor, specs)
	if err != nil {
		return fmt.Errorf("ensure topics: %w", err)
	}
	if log == nil {
		return nil
	}
	if len(rep.Created) > 0 {
		log.InfoContext(ctx, "topics created", "topics", rep.Created, "partitions", k.Partitions, "replicationFactor", k.ReplicationFactor)
	} else {
		log.InfoContext(ctx, "topics exist already", "topics", topics)
	}
	for _, t := range rep.NotCompacted {
		log.WarnContext(ctx, "topic exists without cleanup.policy=compact: consumers that read it whole lose what retention deletes; set it with kafka-configs --alter --entity-type topics --entity-name "+t+" --add-config cleanup.policy=compact",
			"topic", t)
	}
	return nil
}
