package kafkatest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// RecreateTopic creates the topic again as migrate does, retrying a transient refusal (the
// broker answering that it is not the controller, as one does while the controller moves)
// instead of failing the test on it.
func TestRecreateTopicRetriesATransientRefusal(t *testing.T) {
	const topic = "test.recreate.v1"
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	var refused atomic.Int64
	c.ControlKey(kmsg.CreateTopics.Int16(), func(r kmsg.Request) (kmsg.Response, error, bool) {
		refused.Add(1)
		req := r.(*kmsg.CreateTopicsRequest)
		resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic, st.ErrorCode = rt.Topic, kerr.NotController.Code
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true // handled once: the next request is the broker's
	})
	RecreateTopic(t, c.ListenAddrs(), topic)
	if n := refused.Load(); n != 1 {
		t.Fatalf("%d creations refused, want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// A transport of its own: the default one answers metadata from a cache that the delete
	// filled and that may still say the topic is gone.
	transport := &kafka.Transport{}
	defer transport.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(c.ListenAddrs()...), Timeout: 10 * time.Second, Transport: transport}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Topics) != 1 || md.Topics[0].Error != nil || len(md.Topics[0].Partitions) != 4 {
		t.Fatalf("topic after RecreateTopic: %+v", md.Topics)
	}
}
