package eventbus

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kfake"
)

// EmbeddedBroker is an in-process Kafka-protocol broker (franz-go's kfake) for tests and the
// local stack. It keeps everything in memory.
type EmbeddedBroker struct{ c *kfake.Cluster }

// StartEmbeddedBroker starts a one-node broker on a free loopback port (port 0) or the given port.
func StartEmbeddedBroker(port int) (*EmbeddedBroker, error) {
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.DefaultNumPartitions(4)}
	if port > 0 {
		opts = append(opts, kfake.Ports(port))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("embedded kafka broker: %w", err)
	}
	return &EmbeddedBroker{c: c}, nil
}

// Addrs returns the broker addresses (host:port).
func (b *EmbeddedBroker) Addrs() []string { return b.c.ListenAddrs() }

// Close stops the broker.
func (b *EmbeddedBroker) Close() { b.c.Close() }
