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
// one that compacted names but that is not compacted, or whose partition count is not
// k.Partitions, is logged for the operator to fix. Every service's `migrate` calls it with the
// topics the service produces or consumes (the chart's migrate Job runs before the service
// starts), and the local stack with every topic.
//
// A Kafka user without the permission to create topics or describe their configs does not fail
// it: the topics it could not create are logged as warnings with the settings to create them
// with, as are those whose cleanup.policy it could not read. Transient errors are retried a
// few times (eventbus.CreateTopics), then returned.
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
	if log != nil {
		logTopicsReport(ctx, log, k, topics, rep)
	}
	return nil
}

func logTopicsReport(ctx context.Context, log *slog.Logger, k Kafka, topics []string, rep eventbus.TopicsReport) {
	switch {
	case len(rep.Created) > 0:
		log.InfoContext(ctx, "topics created", "topics", rep.Created, "partitions", k.Partitions, "replicationFactor", k.ReplicationFactor)
	case len(rep.NotCreated) == 0:
		log.InfoContext(ctx, "topics exist already", "topics", topics)
	}
	for _, m := range rep.NotCreated {
		create := fmt.Sprintf("kafka-topics.sh --create --topic %s --partitions %d --replication-factor %d --config cleanup.policy=%s",
			m.Name, m.Partitions, m.ReplicationFactor, m.CleanupPolicy)
		log.WarnContext(ctx, "topic missing and not created: the Kafka user lacks CREATE on the cluster or the topic; create it with these settings ("+create+") or grant CREATE",
			"topic", m.Name, "partitions", m.Partitions, "replicationFactor", m.ReplicationFactor, "cleanup.policy", m.CleanupPolicy, "error", m.Err)
	}
	for _, t := range rep.NotCompacted {
		log.WarnContext(ctx, "topic exists without cleanup.policy=compact: consumers that read it whole lose what retention deletes; set it with kafka-configs --alter --entity-type topics --entity-name "+t+" --add-config cleanup.policy=compact",
			"topic", t)
	}
	for _, u := range rep.Unchecked {
		log.WarnContext(ctx, "topic's cleanup.policy not checked: the Kafka user lacks DESCRIBE_CONFIGS on the topic; make sure it is compact (consumers read it whole)",
			"topic", u.Name, "error", u.Err)
	}
	for _, d := range rep.PartitionsDiffer {
		lvl, why := slog.LevelInfo, "left as it is"
		if d.Partitions < d.Want {
			lvl, why = slog.LevelWarn, "left as it is: consumer replicas past its partition count idle"
		}
		log.Log(ctx, lvl, "topic exists with another partition count than KAFKA_PARTITIONS, "+why,
			"topic", d.Name, "partitions", d.Partitions, "want", d.Want)
	}
}
