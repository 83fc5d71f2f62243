package feed

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/telemetry/logtest"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A partition whose reads fail (the broker answering its fetches with an error) is not left
// behind while the others are read: each failure is counted, the first of the row logged once,
// and the partition is read again once the broker answers, its records delivered.
func TestFollowCountsAPartitionsReadErrorsAndGoesOn(t *testing.T) {
	const topic = "test.readerr.v1"
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	var failing atomic.Bool
	failing.Store(true)
	c.ControlKey(kmsg.Fetch.Int16(), func(r kmsg.Request) (kmsg.Response, error, bool) {
		req := r.(*kmsg.FetchRequest)
		if !failing.Load() || len(req.Topics) == 0 || len(req.Topics[0].Partitions) == 0 || req.Topics[0].Partitions[0].Partition != 0 {
			return nil, nil, false
		}
		c.KeepControl()
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.CorruptMessage.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	var logs logtest.Buffer
	var errs atomic.Int64
	tp := Topic{Brokers: c.ListenAddrs(), Name: topic, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		OnReadError: func(p int, _ error) {
			if p == 0 {
				errs.Add(1)
			}
		}}
	var mu sync.Mutex
	read := map[int][]string{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- tp.Follow(ctx, map[int]int64{0: 0, 1: 0}, func(m kafka.Message) {
			mu.Lock()
			read[m.Partition] = append(read[m.Partition], string(m.Key))
			mu.Unlock()
		}, nil)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	cl := &kafka.Client{Addr: kafka.TCP(c.ListenAddrs()...), Timeout: 10 * time.Second}
	publish := func(part int, key string) {
		t.Helper()
		pctx, pcancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer pcancel()
		resp, err := cl.Produce(pctx, &kafka.ProduceRequest{Topic: topic, Partition: part, RequiredAcks: kafka.RequireAll,
			Records: kafka.NewRecordReader(kafka.Record{Key: kafka.NewBytes([]byte(key)), Value: kafka.NewBytes([]byte(key))})})
		if err == nil {
			err = resp.Error
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("%s: read %v, %d read errors of partition 0, logs:\n%s", what, read, errs.Load(), logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	publish(0, "a")
	publish(1, "b")
	waitFor("partition 1 read, partition 0 failing", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return errs.Load() >= 3 && len(read[1]) == 1
	})
	failing.Store(false)
	waitFor("partition 0 read again", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(read[0]) == 1
	})
	if n := strings.Count(logs.String(), "a partition cannot be read"); n != 1 {
		t.Fatalf("the failures of partition 0 logged %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "a partition is read again") {
		t.Fatalf("the recovery not logged:\n%s", logs.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(read) != "map[0:[a] 1:[b]]" {
		t.Fatalf("read %v", read)
	}
}
