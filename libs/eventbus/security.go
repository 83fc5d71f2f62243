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
// as a managed Kafka (MSK, Confluent Cloud, Aiven) requires, with the one transport (kafka.Client,
// kafka.Writer) and the one dialer (kafka.Reader) built from them. NewSecurity builds it once
// per service (service.Kafka.Security); copies share the transport and dialer, so every client
// of this package and the services' own readers it is handed to share one connection pool and
// one TLS configuration, with no handshake or CA file read per client.
//
// The zero value is plaintext without authentication, through kafka-go's default transport and
// dialer (for tests and one-shot tools). A Security is safe for concurrent use.
type Security struct {
	tls       *tls.Config
	sasl      sasl.Mechanism
	transport *kafka.Transport
	dialer    *kafka.Dialer
}

// NewSecurity builds the transport and dialer of tlsConfig (nil: plaintext) and mech (nil: no
// authentication). It keeps a copy of tlsConfig, so a caller changing it later changes nothing.
// The owner calls Close when the last client using it has stopped.
func NewSecurity(tlsConfig *tls.Config, mech sasl.Mechanism) Security {
	if tlsConfig != nil {
		tlsConfig = tlsConfig.Clone()
	}
	return Security{
		tls:       tlsConfig,
		sasl:      mech,
		transport: &kafka.Transport{TLS: tlsConfig, SASL: mech},
		// kafka-go's default timeout and dual-stack dialling.
		dialer: &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: tlsConfig, SASLMechanism: mech},
	}
}

// Enabled reports whether anything beyond plaintext is configured.
func (s Security) Enabled() bool { return s.tls != nil || s.sasl != nil }

// TLS is a copy of the TLS configuration (nil: plaintext).
func (s Security) TLS() *tls.Config {
	if s.tls == nil {
		return nil
	}
	return s.tls.Clone()
}

// SASL is the authentication mechanism (nil: none).
func (s Security) SASL() sasl.Mechanism { return s.sasl }

// Transport is the shared transport for kafka.Client and kafka.Writer: the one NewSecurity
// built, or kafka-go's default transport for the zero value.
func (s Security) Transport() kafka.RoundTripper {
	if s.transport == nil {
		return kafka.DefaultTransport
	}
	return s.transport
}

// Dialer is the shared dialer for kafka.Reader (ReaderConfig.Dialer): the one NewSecurity
// built, or kafka-go's default dialer for the zero value.
func (s Security) Dialer() *kafka.Dialer {
	if s.dialer == nil {
		return kafka.DefaultDialer
	}
	return s.dialer
}

// Close closes the idle connections of the transport NewSecurity built (nothing for the zero
// value). Clients still running dial again, so it belongs after the last of them stopped.
func (s Security) Close() {
	if s.transport != nil {
		s.transport.CloseIdleConnections()
	}
}

// String names what the clients connect with, for errors and logs: "plaintext", "TLS",
// "SASL SCRAM-SHA-256" or "TLS, SASL PLAIN".
func (s Security) String() string {
	var parts []string
	if s.tls != nil {
		parts = append(parts, "TLS")
	}
	if s.sasl != nil {
		parts = append(parts, "SASL "+s.sasl.Name())
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
	if s.sasl != nil && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) {
		return fmt.Errorf("%w (over %s: the broker closed the connection, as it does when SASL authentication fails; check the KAFKA_SASL_* settings)", err, s)
	}
	return fmt.Errorf("%w (over %s)", err, s)
}
