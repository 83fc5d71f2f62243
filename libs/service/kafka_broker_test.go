package service

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/telemetry"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// secureBroker starts an in-process broker with opts and creates topic on it through cfg's
// security, returning cfg with the broker's addresses.
func secureBroker(t *testing.T, cfg Kafka, topic string, opts ...kfake.Opt) Kafka {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.DefaultNumPartitions(2)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg.Brokers = c.ListenAddrs()
	sec, err := cfg.Security()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := eventbus.EnsureTopics(ctx, cfg.Brokers, sec, 1, []eventbus.TopicSpec{{Name: topic, Partitions: 2}}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// roundTrip publishes n events to topic and reads them back in a consumer group, both built
// from cfg's security as a service builds them.
func roundTrip(t *testing.T, cfg Kafka, topic string, n int) {
	t.Helper()
	sec, err := cfg.Security()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pub := eventbus.NewPublisher(cfg.Brokers, eventbus.PublisherOptions{Security: sec})
	defer pub.Close()
	evs := make([]eventbus.Event, n)
	for i := range evs {
		evs[i] = eventbus.Event{Topic: topic, Key: fmt.Sprint(i), Msg: wrapperspb.String(fmt.Sprint(i))}
	}
	if err := pub.Publish(ctx, evs...); err != nil {
		t.Fatalf("publish: %v", err)
	}

	var mu sync.Mutex
	got := map[string]bool{}
	done := make(chan struct{})
	c := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: cfg.Brokers, Security: sec, Group: "secure-test", Topic: topic,
		MaxWait: 10 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		func() *wrapperspb.StringValue { return new(wrapperspb.StringValue) },
		func(_ context.Context, batch []eventbus.Message[*wrapperspb.StringValue]) error {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range batch {
				got[m.Msg.Value] = true
			}
			if len(got) == n {
				close(done)
			}
			return nil
		})
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- c.Run(runCtx) }()
	select {
	case <-done:
	case <-ctx.Done():
		mu.Lock()
		t.Errorf("consumer got %d of %d events", len(got), n)
		mu.Unlock()
	}
	stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
}

func TestKafkaRoundTripOverSASLSCRAM(t *testing.T) {
	cfg := secureBroker(t, Kafka{SASLMechanism: SASLScramSHA256, SASLUsername: "chainintel", SASLPassword: "s3cret-pw"}, "test.scram.v1",
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "chainintel", "s3cret-pw"))
	roundTrip(t, cfg, "test.scram.v1", 20)

	// The same broker refuses a wrong password and a plaintext client, with errors that say so.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	wrong := cfg
	wrong.SASLPassword = "wrong"
	sec, err := wrong.Security()
	if err != nil {
		t.Fatal(err)
	}
	// kfake closes the connection on a failed authentication, as some brokers do; others answer
	// "SASL Authentication Failed" first. Either way the error names the SASL settings.
	const clear = "over SASL SCRAM-SHA-256"
	err = eventbus.EnsureTopics(ctx, cfg.Brokers, sec, 1, []eventbus.TopicSpec{{Name: "test.scram.v1", Partitions: 2}})
	if err == nil || !strings.Contains(err.Error(), clear) || !strings.Contains(err.Error(), "KAFKA_SASL_") {
		t.Fatalf("topics with a wrong password: %v; want an error naming the SASL settings", err)
	}
	pub := eventbus.NewPublisher(cfg.Brokers, eventbus.PublisherOptions{Security: sec})
	defer pub.Close()
	err = pub.Publish(ctx, eventbus.Event{Topic: "test.scram.v1", Key: "k", Msg: wrapperspb.String("x")})
	if err == nil || !strings.Contains(err.Error(), clear) {
		t.Fatalf("publish with a wrong password: %v; want an error naming the SASL settings", err)
	}

	// A consumer retries (a broker outage is waited out) and says why on every round.
	warned := make(chan string, 1)
	log := slog.New(warnHook{func(msg, e string) {
		if strings.Contains(e, clear) {
			select {
			case warned <- msg + ": " + e:
			default:
			}
		}
	}})
	c := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: cfg.Brokers, Security: sec, Group: "secure-test", Topic: "test.scram.v1", Logger: log},
		func() *wrapperspb.StringValue { return new(wrapperspb.StringValue) },
		func(context.Context, []eventbus.Message[*wrapperspb.StringValue]) error { return nil })
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- c.Run(runCtx) }()
	select {
	case w := <-warned:
		t.Log(w)
	case <-ctx.Done():
		t.Error("consumer with a wrong password never said it was the SASL settings")
	}
	stop()
	<-ran
}

// warnHook is a slog handler that hands each warning's message and "error" attribute to fn.
type warnHook struct{ fn func(msg, err string) }

func (warnHook) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h warnHook) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "error" {
			h.fn(r.Message, a.Value.String())
		}
		return true
	})
	return nil
}
func (h warnHook) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h warnHook) WithGroup(string) slog.Handler      { return h }

func TestKafkaRoundTripOverTLS(t *testing.T) {
	caFile, cert := selfSigned(t)
	cfg := secureBroker(t, Kafka{TLS: true, TLSCAFile: caFile}, "test.tls.v1",
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}))
	roundTrip(t, cfg, "test.tls.v1", 20)

	// Without the CA the broker's certificate is not trusted.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	untrusted := cfg
	untrusted.TLSCAFile = ""
	sec, err := untrusted.Security()
	if err != nil {
		t.Fatal(err)
	}
	err = eventbus.EnsureTopics(ctx, cfg.Brokers, sec, 1, []eventbus.TopicSpec{{Name: "test.tls.v1", Partitions: 2}})
	if err == nil || !strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), "over TLS") {
		t.Fatalf("untrusted broker certificate: %v; want a certificate error", err)
	}
}

// A consumer's group reader joins its group as soon as it is built, so a service whose assembly
// fails after Consume must leave the group at Close, although Run never ran.
func TestCloseLeavesTheGroupOfAConsumerNeverRun(t *testing.T) {
	cfg := secureBroker(t, Kafka{}, "closed.v1")
	s, err := New(context.Background(), "test", testBase, Deps{Logger: quietLog, Telemetry: telemetry.Nop("test"), OpsListener: listen(t)},
		WithKafka(cfg))
	if err != nil {
		t.Fatal(err)
	}
	Consume(s, "closed.v1", func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(context.Context, []eventbus.Message[*wrapperspb.StringValue]) error { return nil })
	client := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: 5 * time.Second}
	members := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{"test.closed.v1"}})
		if err != nil || len(res.Groups) != 1 {
			return -1
		}
		return len(res.Groups[0].Members)
	}
	waitUntil(t, "the consumer joined its group", func() bool { return members() == 1 })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the consumer left its group", func() bool { return members() == 0 })
}

// waitUntil polls cond until it holds, failing the test after 30 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
