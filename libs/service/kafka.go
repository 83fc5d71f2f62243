package service

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// Kafka is the broker configuration of a service that produces or consumes events. Brokers
// alone is a plaintext connection, as to the local stack's broker; a managed Kafka needs TLS
// (MSK, Confluent Cloud, Aiven), SASL (Confluent, Aiven, MSK with SCRAM) or both.
type Kafka struct {
	Brokers           []string `env:"KAFKA_BROKERS,required" envSeparator:","`
	Partitions        int      `env:"KAFKA_PARTITIONS" envDefault:"8"`
	ReplicationFactor int      `env:"KAFKA_REPLICATION_FACTOR" envDefault:"1"`

	// TLS encrypts every connection to the brokers and checks their certificates against the
	// system roots, plus TLSCAFile's when set.
	TLS bool `env:"KAFKA_TLS" envDefault:"false"`
	// TLSCAFile is a PEM bundle of the CAs that sign the brokers' certificates, for a broker
	// whose CA the system does not trust (a private CA).
	TLSCAFile string `env:"KAFKA_TLS_CA_FILE"`
	// TLSServerName is the name the brokers' certificates are checked against; empty: each
	// broker's host name as dialled.
	TLSServerName string `env:"KAFKA_TLS_SERVER_NAME"`
	// TLSInsecureSkipVerify accepts any broker certificate: for testing against a broker with
	// a throwaway certificate only, never in a deployment (anyone on the path can read and
	// change the traffic).
	TLSInsecureSkipVerify bool `env:"KAFKA_TLS_INSECURE_SKIP_VERIFY" envDefault:"false"`
	// SASLMechanism is how the service authenticates: none, plain, scram-sha-256 or
	// scram-sha-512. PLAIN sends the password as is; use it over TLS only.
	SASLMechanism string `env:"KAFKA_SASL_MECHANISM" envDefault:"none"`
	SASLUsername  string `env:"KAFKA_SASL_USERNAME"`
	SASLPassword  string `env:"KAFKA_SASL_PASSWORD" secret:"true"`
}

// SASL mechanisms KAFKA_SASL_MECHANISM names.
const (
	SASLNone        = "none"
	SASLPlain       = "plain"
	SASLScramSHA256 = "scram-sha-256"
	SASLScramSHA512 = "scram-sha-512"
)

// Check reports every problem of the TLS and SASL settings, naming each variable with the
// service's prefix (e.g. "STREAM_"). A service's Config.Validate calls it.
func (k Kafka) Check(prefix string) error {
	var p config.Problems
	mech := strings.ToLower(strings.TrimSpace(k.SASLMechanism))
	switch mech {
	case "", SASLNone:
	case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		if k.SASLUsername == "" {
			p.Addf("%sKAFKA_SASL_USERNAME: required with %sKAFKA_SASL_MECHANISM=%s", prefix, prefix, mech)
		}
		if k.SASLPassword == "" {
			p.Addf("%sKAFKA_SASL_PASSWORD: required with %sKAFKA_SASL_MECHANISM=%s", prefix, prefix, mech)
		}
	default:
		p.Addf("%sKAFKA_SASL_MECHANISM: %q is not one of none, plain, scram-sha-256, scram-sha-512", prefix, k.SASLMechanism)
	}
	if !k.TLS && (k.TLSCAFile != "" || k.TLSServerName != "" || k.TLSInsecureSkipVerify) {
		// Set without TLS they would do nothing, and the connection would be plaintext
		// while the operator believes it is encrypted.
		p.Addf("%sKAFKA_TLS: must be true when %sKAFKA_TLS_CA_FILE, %sKAFKA_TLS_SERVER_NAME or %sKAFKA_TLS_INSECURE_SKIP_VERIFY is set",
			prefix, prefix, prefix, prefix)
	}
	if k.TLS && k.TLSCAFile != "" {
		if _, err := caPool(k.TLSCAFile); err != nil {
			p.Addf("%sKAFKA_TLS_CA_FILE: %v", prefix, err)
		}
	}
	return p.Err()
}

// Security builds the TLS configuration and SASL mechanism the service's Kafka clients connect
// with, and the one transport and dialer they share (eventbus.NewSecurity): the one place they
// are built, once per service (New with WithKafka) or per one-shot command. Call Check first for
// errors that name the variables with the service's prefix; Security fails on what Check
// reports, or a CA file changed since, naming the file.
func (k Kafka) Security() (eventbus.Security, error) {
	if err := k.Check(""); err != nil {
		return eventbus.Security{}, fmt.Errorf("kafka security: %w", err)
	}
	var c *tls.Config
	if k.TLS {
		c = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: k.TLSServerName, InsecureSkipVerify: k.TLSInsecureSkipVerify}
		if k.TLSCAFile != "" {
			pool, err := caPool(k.TLSCAFile)
			if err != nil {
				return eventbus.Security{}, fmt.Errorf("KAFKA_TLS_CA_FILE: %w", err)
			}
			c.RootCAs = pool
		}
	}
	m, err := k.mechanism()
	if err != nil {
		return eventbus.Security{}, err
	}
	return eventbus.NewSecurity(c, m), nil
}

// mechanism is the SASL mechanism of a checked configuration (nil: none).
func (k Kafka) mechanism() (sasl.Mechanism, error) {
	switch strings.ToLower(strings.TrimSpace(k.SASLMechanism)) {
	case SASLPlain:
		return plain.Mechanism{Username: k.SASLUsername, Password: k.SASLPassword}, nil
	case SASLScramSHA256:
		return scramMechanism(scram.SHA256, k)
	case SASLScramSHA512:
		return scramMechanism(scram.SHA512, k)
	}
	return nil, nil
}

func scramMechanism(algo scram.Algorithm, k Kafka) (sasl.Mechanism, error) {
	m, err := scram.Mechanism(algo, k.SASLUsername, k.SASLPassword)
	if err != nil {
		return nil, fmt.Errorf("KAFKA_SASL_MECHANISM %s: %w", k.SASLMechanism, err)
	}
	return m, nil
}

// caPool is the system roots plus the certificates of a PEM bundle.
func caPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New(file + ": no PEM certificate in it")
	}
	return pool, nil
}

// KafkaFromEnv is the Kafka configuration of a tool that connects to a deployment's brokers (a
// benchmark, the e2e suite's publisher), read as a service reads its own: brokers, with the
// environment's prefix+KAFKA_TLS*, prefix+KAFKA_SASL_*, KAFKA_PARTITIONS and
// KAFKA_REPLICATION_FACTOR, checked as Check does. Without them set it is plaintext, as to the
// local stack's broker.
func KafkaFromEnv(prefix string, brokers []string) (Kafka, error) {
	environ := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, prefix+"KAFKA_") {
			environ[k] = v
		}
	}
	environ[prefix+"KAFKA_BROKERS"] = strings.Join(brokers, ",")
	var k Kafka
	if err := config.LoadFrom(&k, prefix, environ); err != nil {
		return k, err
	}
	if err := k.Check(prefix); err != nil {
		return k, fmt.Errorf("invalid configuration: %w", err)
	}
	return k, nil
}
