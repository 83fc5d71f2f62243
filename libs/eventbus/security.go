package eventbus

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
)

// Security is how clients connect to the brokers beyond plain TCP: TLS and SASL authentication,
// as a managed Kafka (MSK, Confluent Cloud, Aiven) requires. The zero value is plaintext without
// authentication. Services build it from their KAFKA_TLS* and KAFKA_SASL_* settings
// (service.Kafka.Security); every client of this package and the services' own readers take it
// at construction.
type Security struct {
	TLS  *tls.Config    // nil: plaintext
	SASL sasl.Mechanism // nil: no authentication
}

// Enabled reports whether anything beyond plaintext is configured.
func (s Security) Enabled() bool { return s.TLS != nil || s.SASL != nil }

// Dialer returns a dialer for kafka.Reader (ReaderConfig.Dialer), with kafka-go's default
// timeout and dual-stack dialling.
func (s Security) Dialer() *kafka.Dialer {
	return &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: s.tlsConfig(), SASLMechanism: s.SASL}
}

// Transport returns a transport for kafka.Client and kafka.Writer. It keeps a connection pool of
// its own: the owner calls CloseIdleConnections when it is done with it.
func (s Security) Transport() *kafka.Transport {
	return &kafka.Transport{TLS: s.tlsConfig(), SASL: s.SASL}
}

// tlsConfig is a copy per client, so no client shares a config another may still change.
func (s Security) tlsConfig() *tls.Config {
	if s.TLS == nil {
		return nil
	}
	return s.TLS.Clone()
}

// String names what the clients connect with, for errors and logs: "plaintext", "TLS",
// "SASL SCRAM-SHA-256" or "TLS, SASL PLAIN".
func (s Security) String() string {
	var parts []string
	if s.TLS != nil {
		parts = append(parts, "TLS")
	}
	if s.SASL != nil {
		parts = append(parts, "SASL "+s.SASL.Name())
	}
	if len(parts) == 0 {
		return "plaintext"
	}
	return strings.Join(parts, ", ")
}

// explain adds to a client error what the client connected with. A broker answers a failed
// SASL authentication with "SASL Authentication Failed", or some just close the connection, which
// kafka-go reports as an EOF: that case gets said in words.
func (s Security) explain(err error) error {
	if err == nil || !s.Enabled() {
		return err
	}
	if s.SASL != nil && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) {
		return fmt.Errorf("%w (over %s: the broker closed the connection, as it does when SASL authentication fails; check the KAFKA_SASL_* settings)", err, s)
	}
	return fmt.Errorf("%w (over %s)", err, s)
}
