package eventbus

import (
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kfake"
)

// EmbeddedBroker is an in-process Kafka-protocol broker (franz-go's kfake) for tests and the
// local stack. It keeps everything in memory.
type EmbeddedBroker struct{ c *kfake.Cluster }

// EmbeddedOptions tune an embedded broker; the zero value is a broker on a free loopback port
// with kfake's defaults.
type EmbeddedOptions struct {
	Port int // 0: a free loopback port
	// MaxMessageBytes is the broker's message.max.bytes, the largest record batch it accepts
	// (0: kfake's default, about 1 MiB); tests of records the broker refuses set it small.
	MaxMessageBytes int
}

// StartEmbeddedBroker starts a one-node broker on a free loopback port (port 0) or the given port.
func StartEmbeddedBroker(port int) (*EmbeddedBroker, error) {
	return StartEmbeddedBrokerWith(EmbeddedOptions{Port: port})
}

// StartEmbeddedBrokerWith starts a one-node broker as o says.
func StartEmbeddedBrokerWith(o EmbeddedOptions) (*EmbeddedBroker, error) {
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.DefaultNumPartitions(4)}
	if o.Port > 0 {
		opts = append(opts, kfake.Ports(o.Port))
	}
	if o.MaxMessageBytes > 0 {
		opts = append(opts, kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(o.MaxMessageBytes)}))
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
