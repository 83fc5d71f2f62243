package eventbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"syscall"
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
// left as they are. Unlike CreateTopics it fails when the brokers refuse to create a missing
// topic, since its callers (tests, local tools) go on to use the topics.
func EnsureTopics(ctx context.Context, brokers []string, sec Security, rf int, specs []TopicSpec) error {
	rep, err := CreateTopics(ctx, brokers, sec, rf, specs)
	if err != nil {
		return err
	}
	errs := make([]error, len(rep.NotCreated))
	for i, m := range rep.NotCreated {
		errs[i] = fmt.Errorf("create topic %s: %w", m.Name, m.Err)
	}
	return errors.Join(errs...)
}

// TopicsReport is what CreateTopics found and did.
type TopicsReport struct {
	// Created are the topics it created, ".dlq" companions included, in the order of specs.
	Created []string
	// NotCreated are the missing topics the brokers refused to create for lack of permission
	// (TOPIC_ or CLUSTER_AUTHORIZATION_FAILED), with the settings they should have, in the
	// order of specs.
	NotCreated []MissingTopic
	// NotCompacted are the topics of specs with Compacted that existed already without
	// cleanup.policy compact: consumers that read them whole to build state lose the records
	// the broker's retention deletes. CreateTopics never alters a topic; the operator does.
	NotCompacted []string
	// Unchecked are the topics of specs with Compacted that existed already and whose
	// cleanup.policy the brokers refused to describe (no DESCRIBE_CONFIGS), sorted by name.
	Unchecked []UncheckedTopic
	// PartitionsDiffer are the existing topics of specs whose partition count is not the
	// spec's, in the order of specs; ".dlq" companions are not compared.
	PartitionsDiffer []PartitionsDiffer
}

// MissingTopic is a topic that does not exist and was not created, with its settings.
type MissingTopic struct {
	Name              string
	Partitions        int
	ReplicationFactor int
	CleanupPolicy     string // "compact" or "delete"
	Err               error  // the brokers' answer
}

// UncheckedTopic is a topic whose cleanup.policy could not be read, and why.
type UncheckedTopic struct {
	Name string
	Err  error
}

// PartitionsDiffer is an existing topic with another partition count than its spec's.
type PartitionsDiffer struct {
	Name       string
	Partitions int // what the topic has
	Want       int // what the spec says
}

// CreateTopics creates the topics of specs that do not exist yet (and their ".dlq" companions),
// with replication factor rf, connecting with sec, and reports what it created and what it
// found; existing topics are never altered. It asks to create only the topics the brokers do
// not list, so a principal allowed to describe but not to create topics passes when they all
// exist; when some are missing, the brokers' refusal to create them for lack of permission is
// reported (TopicsReport.NotCreated), not returned as an error (EnsureTopics returns it), and
// so is a refusal to describe their configs. Transient errors (timeouts, a controller moving, a
// leader not available, the network) are retried with backoff for a bounded time, then
// returned.
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
	partitions := map[string]int{}
	for _, t := range md.Topics {
		// A topic listed with another error (no leader yet, just after its creation) exists.
		if !errors.Is(t.Error, kafka.UnknownTopicOrPartition) {
			partitions[t.Name] = len(t.Partitions)
		}
	}
	var topics []kafka.TopicConfig
	var compacted []string
	for _, s := range specs {
		if n, ok := partitions[s.Name]; !ok {
			cfg := kafka.TopicConfig{Topic: s.Name, NumPartitions: s.Partitions, ReplicationFactor: rf}
			if s.Compacted {
				cfg.ConfigEntries = []kafka.ConfigEntry{{ConfigName: "cleanup.policy", ConfigValue: "compact"}}
			}
			topics = append(topics, cfg)
		} else {
			if s.Compacted {
				compacted = append(compacted, s.Name)
			}
			if n != s.Partitions {
				rep.PartitionsDiffer = append(rep.PartitionsDiffer, PartitionsDiffer{Name: s.Name, Partitions: n, Want: s.Partitions})
			}
		}
		if _, ok := partitions[s.Name+".dlq"]; !ok {
			topics = append(topics, kafka.TopicConfig{Topic: s.Name + ".dlq", NumPartitions: 1, ReplicationFactor: rf})
		}
	}
	if rep.Created, rep.NotCreated, err = createMissing(ctx, client, brokers, topics); err != nil {
		return rep, err
	}
	rep.NotCompacted, rep.Unchecked, err = notCompacted(ctx, client, compacted)
	return rep, err
}

// createMissing creates topics, a topic another client created meanwhile counting as done, and
// returns the names it created and the topics it was not allowed to create. Topics that fail
// transiently are asked for again (retrying).
func createMissing(ctx context.Context, client *kafka.Client, brokers []string, topics []kafka.TopicConfig) ([]string, []MissingTopic, error) {
	var created []string
	var denied []MissingTopic
	pending := topics
	err := retrying(ctx, func(ctx context.Context) (again, fail error) {
		if len(pending) == 0 {
			return nil, nil
		}
		resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: pending})
		var outcome map[string]error
		switch {
		case err == nil:
			outcome = resp.Errors
		case isDenied(err) || isTransient(err):
			// The whole request failed: every topic of it failed so.
			outcome = make(map[string]error, len(pending))
			for _, t := range pending {
				outcome[t.Topic] = err
			}
		default:
			return nil, fmt.Errorf("create topics: %w (are the brokers %v reachable?)", err, brokers)
		}
		var retry []kafka.TopicConfig
		var agains, fails []error
		for _, t := range pending {
			terr := outcome[t.Topic]
			switch {
			case terr == nil:
				created = append(created, t.Topic)
			case errors.Is(terr, kafka.TopicAlreadyExists):
			case isDenied(terr):
				denied = append(denied, missingTopic(t, terr))
			case isTransient(terr):
				retry = append(retry, t)
				agains = append(agains, fmt.Errorf("create topic %s: %w", t.Topic, terr))
			default:
				fails = append(fails, fmt.Errorf("create topic %s: %w", t.Topic, terr))
			}
		}
		pending = retry
		return errors.Join(agains...), errors.Join(fails...)
	})
	// Retried topics were appended after the others: back to the order of specs.
	order := make(map[string]int, len(topics))
	for i, t := range topics {
		order[t.Topic] = i
	}
	sort.SliceStable(created, func(i, j int) bool { return order[created[i]] < order[created[j]] })
	sort.SliceStable(denied, func(i, j int) bool { return order[denied[i].Name] < order[denied[j].Name] })
	return created, denied, err
}

func missingTopic(t kafka.TopicConfig, err error) MissingTopic {
	m := MissingTopic{Name: t.Topic, Partitions: t.NumPartitions, ReplicationFactor: t.ReplicationFactor, CleanupPolicy: "delete", Err: err}
	for _, e := range t.ConfigEntries {
		if e.ConfigName == "cleanup.policy" {
			m.CleanupPolicy = e.ConfigValue
		}
	}
	return m
}

// notCompacted returns those of topics whose cleanup.policy does not include compact, and
// those whose cleanup.policy the brokers refused to describe.
func notCompacted(ctx context.Context, client *kafka.Client, topics []string) ([]string, []UncheckedTopic, error) {
	var out []string
	var unchecked []UncheckedTopic
	pending := topics
	err := retrying(ctx, func(ctx context.Context) (again, fail error) {
		if len(pending) == 0 {
			return nil, nil
		}
		req := &kafka.DescribeConfigsRequest{}
		for _, t := range pending {
			req.Resources = append(req.Resources, kafka.DescribeConfigRequestResource{
				ResourceType: kafka.ResourceTypeTopic, ResourceName: t, ConfigNames: []string{"cleanup.policy"}})
		}
		resp, err := client.DescribeConfigs(ctx, req)
		switch {
		case err == nil:
		case isDenied(err):
			for _, t := range pending {
				unchecked = append(unchecked, UncheckedTopic{Name: t, Err: err})
			}
			pending = nil
			return nil, nil
		case isTransient(err):
			return fmt.Errorf("describe topic configs: %w", err), nil
		default:
			return nil, fmt.Errorf("describe topic configs: %w", err)
		}
		var retry []string
		var agains, fails []error
		for _, r := range resp.Resources {
			switch {
			case r.Error == nil:
				if !strings.Contains(cleanupPolicy(r.ConfigEntries), "compact") {
					out = append(out, r.ResourceName)
				}
			case isDenied(r.Error):
				unchecked = append(unchecked, UncheckedTopic{Name: r.ResourceName, Err: r.Error})
			case isTransient(r.Error):
				retry = append(retry, r.ResourceName)
				agains = append(agains, fmt.Errorf("describe topic %s: %w", r.ResourceName, r.Error))
			default:
				fails = append(fails, fmt.Errorf("describe topic %s: %w", r.ResourceName, r.Error))
			}
		}
		pending = retry
		return errors.Join(agains...), errors.Join(fails...)
	})
	sort.Strings(out)
	sort.Slice(unchecked, func(i, j int) bool { return unchecked[i].Name < unchecked[j].Name })
	return out, unchecked, err
}

func cleanupPolicy(entries []kafka.DescribeConfigResponseConfigEntry) string {
	for _, e := range entries {
		if e.ConfigName == "cleanup.policy" {
			return e.ConfigValue
		}
	}
	return ""
}

// Retries of transient errors: a few, with a doubling wait, all within retryBudget, requests
// included.
const (
	retryAttempts = 5
	retryFirst    = 500 * time.Millisecond
	retryBudget   = 45 * time.Second
)

// retrying calls try until it reports nothing to retry (again nil) or a permanent error (fail),
// at most retryAttempts times, waiting between calls, with a ctx that ends retryBudget from now
// (or with ctx) for try's requests. When the attempts or the time run out it returns the last
// transient error.
func retrying(ctx context.Context, try func(context.Context) (again, fail error)) error {
	ctx, cancel := context.WithTimeout(ctx, retryBudget)
	defer cancel()
	wait := retryFirst
	for attempt := 1; ; attempt++ {
		again, fail := try(ctx)
		if fail != nil {
			return errors.Join(fail, again)
		}
		if again == nil {
			return nil
		}
		if attempt == retryAttempts {
			return fmt.Errorf("%w (still failing after %d attempts)", again, attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (retrying stopped after %d attempts: %w)", again, attempt, ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
}

// isDenied tells a refusal for lack of permission.
func isDenied(err error) bool {
	return errors.Is(err, kafka.TopicAuthorizationFailed) || errors.Is(err, kafka.ClusterAuthorizationFailed)
}

// isTransient tells an error that asking again may cure: a Kafka error its protocol calls
// retriable (a timeout, not the controller, a leader not available, a quota), a broker not
// available (kafka-go's answer when it could not reach the controller), or a network error
// or request timeout.
func isTransient(err error) bool {
	var kerr kafka.Error
	if errors.As(err, &kerr) {
		return kerr.Temporary() || kerr == kafka.BrokerNotAvailable
	}
	var nerr net.Error
	return errors.As(err, &nerr) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
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
