package service

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/telemetry"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// GET /status on the ops port answers health with its reason, the checks' names, and the
// newest error the service logged (through loggers derived with With as well). A dependency
// down fails health, not /readyz (every replica shares it: failing readiness would only empty
// the Service); a check of the instance fails both.
func TestOpsStatus(t *testing.T) {
	httpLn, opsLn := listen(t), listen(t)
	s, err := New(context.Background(), "svc", Base{ShutdownTimeout: 10 * time.Second, InternalSecret: "0123456789abcdef"},
		Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Telemetry: telemetry.Nop("svc"), HTTPListener: httpLn, OpsListener: opsLn})
	if err != nil {
		t.Fatal(err)
	}
	var down, unloaded atomic.Bool
	s.Ready.AddDependency("postgres", func(context.Context) error {
		if down.Load() {
			return errors.New("connection refused")
		}
		return nil
	})
	s.Ready.AddCheck("read model", func(context.Context) error {
		if unloaded.Load() {
			return errors.New("loading")
		}
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, http.NotFoundHandler()) }()
	defer func() { cancel(); <-done }()
	url := "http://" + opsLn.Addr().String()
	waitStatus(t, url+"/readyz", 200)

	get := func() Status { return getStatus(t, url) }
	st := get()
	if !st.Ready || st.NotReady != "" || st.Service != "svc" || !slices.Equal(st.Checks, []string{"postgres", "read model"}) || st.LastError != nil {
		t.Fatalf("healthy status: %+v", st)
	}
	s.Log.With("part", "worker").Error("flush failed", "error", errors.New("disk full"))
	s.Log.Warn("not an error")
	down.Store(true)
	st = get()
	if st.Ready || st.NotReady != "postgres: connection refused" {
		t.Errorf("not ready: %+v", st)
	}
	waitStatus(t, url+"/readyz", 200)
	down.Store(false)
	unloaded.Store(true)
	waitStatus(t, url+"/readyz", 503)
	if st = get(); st.Ready || st.NotReady != "read model: loading" {
		t.Errorf("not ready: %+v", st)
	}
	if st.LastError == nil || st.LastError.Message != "flush failed" || st.LastError.Error != "disk full" || st.LastError.Time.IsZero() {
		t.Errorf("last error: %+v", st.LastError)
	}
}

// A Kafka outage shows in /status (kafka.lastError, kafka.lagReadAt, a publish failing after
// kafka.publishedAt) without failing readiness: the consumers wait it out, and readiness checks
// only postgres and redis.
func TestOpsStatusShowsABrokerOutage(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	var down atomic.Bool
	cluster.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		if down.Load() {
			return nil, errors.New("broker down"), true
		}
		return nil, nil, false
	})
	cfg := Kafka{Brokers: cluster.ListenAddrs()}
	ctx, cancel := context.WithCancel(context.Background())
	if err := eventbus.EnsureTopics(ctx, cfg.Brokers, eventbus.Security{}, 1, []eventbus.TopicSpec{{Name: "test.status.v1", Partitions: 1}}); err != nil {
		t.Fatal(err)
	}
	httpLn, opsLn := listen(t), listen(t)
	s, err := New(ctx, "svc", Base{ShutdownTimeout: 10 * time.Second, InternalSecret: "0123456789abcdef"},
		Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Telemetry: telemetry.Nop("svc"), HTTPListener: httpLn, OpsListener: opsLn},
		WithKafka(cfg))
	if err != nil {
		t.Fatal(err)
	}
	Consume(s, "test.status.v1", func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(context.Context, []eventbus.Message[*wrapperspb.StringValue]) error { return nil },
		func(o *eventbus.ConsumerOptions) { o.LagInterval = 100 * time.Millisecond })
	pub := s.Publisher()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, http.NotFoundHandler()) }()
	defer func() { cancel(); <-done }()
	url := "http://" + opsLn.Addr().String()
	waitStatus(t, url+"/readyz", 200)
	publish := func(timeout time.Duration) error {
		pctx, pcancel := context.WithTimeout(ctx, timeout)
		defer pcancel()
		return pub.Publish(pctx, eventbus.Event{Topic: "test.status.v1", Key: "k", Msg: &wrapperspb.StringValue{Value: "v"}})
	}
	if err := publish(time.Minute); err != nil {
		t.Fatal(err)
	}
	get := func() Status { return getStatus(t, url) }
	// A bound only against a hang.
	deadline := time.Now().Add(time.Minute)
	wait := func(what string, ok func(Status) bool) Status {
		t.Helper()
		for {
			st := get()
			if ok(st) {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %+v (kafka %+v)", what, st, st.Kafka)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	st := wait("lag read", func(st Status) bool { return st.Kafka != nil && st.Kafka.LagReadAt != nil })
	if st.Kafka.Consumers != 1 || st.Kafka.Publishers != 1 || st.Kafka.PublishedAt == nil || st.Kafka.LastError != nil ||
		st.Kafka.PublishError != nil || !st.Ready {
		t.Fatalf("before the outage: %+v (kafka %+v)", st, st.Kafka)
	}
	down.Store(true)
	outage := time.Now()
	// A publish the brokers cannot take is the newest broker error, after the last success.
	if err := publish(500 * time.Millisecond); err == nil {
		t.Fatal("a publish succeeded during the outage")
	}
	if st = get(); st.Kafka.PublishError == nil || st.Kafka.PublishError.Op != "publish" || st.Kafka.PublishError.Topic != "test.status.v1" ||
		!st.Kafka.PublishError.Time.After(*st.Kafka.PublishedAt) {
		t.Errorf("after a failed publish: %+v", st.Kafka)
	}
	st = wait("broker error", func(st Status) bool { return st.Kafka.LastError != nil })
	if e := st.Kafka.LastError; e.Topic != "test.status.v1" || e.Group != "svc.test.status.v1" || e.Error == "" || e.Time.Before(outage.Add(-time.Second)) {
		t.Errorf("last broker error: %+v", e)
	}
	if !st.Ready || st.NotReady != "" {
		t.Errorf("a broker outage failed readiness: %+v", st)
	}
	// The lag is no longer read: its time stands still during the outage (compared with itself
	// once the error shows, as a read answered just as the outage began may land after it).
	before := st.Kafka.LagReadAt
	time.Sleep(300 * time.Millisecond)
	if st = get(); before == nil || st.Kafka.LagReadAt == nil || !st.Kafka.LagReadAt.Equal(*before) {
		t.Errorf("lag read during the outage: %+v, before %v", st.Kafka, before)
	}
}

// getStatus reads GET /status of the ops port at url.
func getStatus(t *testing.T, url string) Status {
	t.Helper()
	resp, err := http.Get(url + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// fixedView is a consumer's broker view with set answers.
type fixedView struct {
	err *eventbus.BrokerError
	at  time.Time
}

func (v fixedView) LastBrokerError() *eventbus.BrokerError { return v.err }
func (v fixedView) LagReadAt() time.Time                   { return v.at }

// A consumer the service builds after the wiring (LateConsumer) is counted by /status from the
// start, as starting (no lag read, no error), then with the view of the consumer handed over.
func TestOpsStatusCountsALateConsumer(t *testing.T) {
	httpLn, opsLn := listen(t), listen(t)
	s, err := New(context.Background(), "svc", Base{ShutdownTimeout: 10 * time.Second, InternalSecret: "0123456789abcdef"},
		Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Telemetry: telemetry.Nop("svc"), HTTPListener: httpLn, OpsListener: opsLn},
		WithKafka(Kafka{Brokers: []string{"127.0.0.1:1"}}))
	if err != nil {
		t.Fatal(err)
	}
	set := s.LateConsumer()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, http.NotFoundHandler()) }()
	defer func() { cancel(); <-done }()
	url := "http://" + opsLn.Addr().String()
	waitStatus(t, url+"/readyz", 200)
	if st := getStatus(t, url); st.Kafka == nil || st.Kafka.Consumers != 1 || st.Kafka.LagReadAt != nil || st.Kafka.LastError != nil {
		t.Fatalf("before the consumer is built: kafka %+v, want 1 consumer, starting", st.Kafka)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fail := &eventbus.BrokerError{Time: at.Add(time.Second), Topic: "t", Op: "fetch", Error: "connection refused"}
	set(fixedView{err: fail, at: at})
	st := getStatus(t, url)
	if st.Kafka == nil || st.Kafka.Consumers != 1 || st.Kafka.LagReadAt == nil || !st.Kafka.LagReadAt.Equal(at) ||
		st.Kafka.LastError == nil || st.Kafka.LastError.Error != "connection refused" {
		t.Fatalf("after: kafka %+v, want the consumer's lag read and error", st.Kafka)
	}
}
