package service

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/telemetry"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl/plain"
)

// kafkaEnv loads a Kafka config from env with prefix "T_" and returns it with the load error.
func kafkaEnv(t *testing.T, env map[string]string) (Kafka, error) {
	t.Helper()
	full := map[string]string{"T_KAFKA_BROKERS": "b1:9093,b2:9093"}
	for k, v := range env {
		full["T_"+k] = v
	}
	var c checkedKafka
	err := config.LoadFrom(&c, "T_", full)
	return c.Kafka, err
}

// checkedKafka is a service config made of Kafka alone, validated as services do.
type checkedKafka struct{ Kafka }

func (c checkedKafka) Validate() error { return c.Check("T_") }

func TestKafkaCheckNamesTheVariable(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string // substrings of the error; none: valid
	}{
		{"plaintext", nil, nil},
		{"scram with credentials", map[string]string{"KAFKA_SASL_MECHANISM": "SCRAM-SHA-512", "KAFKA_SASL_USERNAME": "u", "KAFKA_SASL_PASSWORD": "p"}, nil},
		{"plain without credentials", map[string]string{"KAFKA_SASL_MECHANISM": "plain"},
			[]string{"T_KAFKA_SASL_USERNAME: required with T_KAFKA_SASL_MECHANISM=plain", "T_KAFKA_SASL_PASSWORD: required"}},
		{"scram without password", map[string]string{"KAFKA_SASL_MECHANISM": "scram-sha-256", "KAFKA_SASL_USERNAME": "u"},
			[]string{"T_KAFKA_SASL_PASSWORD: required with T_KAFKA_SASL_MECHANISM=scram-sha-256"}},
		{"unknown mechanism", map[string]string{"KAFKA_SASL_MECHANISM": "oauthbearer", "KAFKA_SASL_USERNAME": "u", "KAFKA_SASL_PASSWORD": "p"},
			[]string{`T_KAFKA_SASL_MECHANISM: "oauthbearer" is not one of`}},
		{"missing CA file", map[string]string{"KAFKA_TLS": "true", "KAFKA_TLS_CA_FILE": filepath.Join(dir, "absent.pem")},
			[]string{"T_KAFKA_TLS_CA_FILE:", "absent.pem"}},
		{"CA file without a certificate", map[string]string{"KAFKA_TLS": "true", "KAFKA_TLS_CA_FILE": notPEM},
			[]string{"T_KAFKA_TLS_CA_FILE:", "no PEM certificate"}},
		{"TLS settings without TLS", map[string]string{"KAFKA_TLS_SERVER_NAME": "kafka.example.com"},
			[]string{"T_KAFKA_TLS: must be true"}},
		{"TLS not a bool", map[string]string{"KAFKA_TLS": "yes please"}, []string{"T_KAFKA_TLS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kafkaEnv(t, tc.env)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestKafkaSecurityBuildsTLSAndSASL(t *testing.T) {
	k, err := kafkaEnv(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := k.Security()
	if err != nil || sec.Enabled() {
		t.Fatalf("plaintext: %+v, %v; want no TLS, no SASL", sec, err)
	}

	caFile, _ := selfSigned(t)
	k, err = kafkaEnv(t, map[string]string{"KAFKA_TLS": "true", "KAFKA_TLS_CA_FILE": caFile, "KAFKA_TLS_SERVER_NAME": "kafka.internal",
		"KAFKA_SASL_MECHANISM": "plain", "KAFKA_SASL_USERNAME": "svc", "KAFKA_SASL_PASSWORD": "pw"})
	if err != nil {
		t.Fatal(err)
	}
	sec, err = k.Security()
	if err != nil {
		t.Fatal(err)
	}
	if c := sec.TLS(); c == nil || c.ServerName != "kafka.internal" || c.InsecureSkipVerify || c.RootCAs == nil || c.MinVersion < tls.VersionTLS12 {
		t.Fatalf("tls config %+v", c)
	}
	if m, ok := sec.SASL().(plain.Mechanism); !ok || m.Username != "svc" || m.Password != "pw" {
		t.Fatalf("sasl %#v; want PLAIN svc", sec.SASL())
	}
	d, tr := sec.Dialer(), sec.Transport().(*kafka.Transport)
	if d.TLS == nil || d.SASLMechanism == nil || tr.TLS == nil || tr.SASL == nil {
		t.Fatalf("dialer %+v / transport %+v lack TLS or SASL", d, tr)
	}

	for mech, name := range map[string]string{"scram-sha-256": "SCRAM-SHA-256", "Scram-SHA-512": "SCRAM-SHA-512"} {
		k, err = kafkaEnv(t, map[string]string{"KAFKA_SASL_MECHANISM": mech, "KAFKA_SASL_USERNAME": "svc", "KAFKA_SASL_PASSWORD": "pw"})
		if err != nil {
			t.Fatal(err)
		}
		if sec, err = k.Security(); err != nil || sec.SASL() == nil || sec.SASL().Name() != name || sec.TLS() != nil {
			t.Fatalf("%s: %+v, %v; want %s without TLS", mech, sec, err, name)
		}
	}

	// A configuration that was never checked still cannot build a half-secure client.
	if _, err := (Kafka{SASLMechanism: "plain"}).Security(); err == nil || !strings.Contains(err.Error(), "KAFKA_SASL_USERNAME") {
		t.Fatalf("unchecked plain without username: %v", err)
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 to a PEM file and returns the file
// and the certificate with its key, for a TLS broker.
func selfSigned(t *testing.T) (string, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kfake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return file, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// A Kafka configuration that cannot be built (its CA file gone or not PEM since the check) fails
// New, naming the file, before anything starts: the ops port it was handed stays unserved.
func TestNewRefusesUnbuildableKafkaSecurity(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, file := range map[string]string{"gone": filepath.Join(t.TempDir(), "gone.pem"), "not PEM": notPEM} {
		t.Run(name, func(t *testing.T) {
			opsLn := listen(t)
			defer opsLn.Close()
			cfg := Kafka{Brokers: []string{"127.0.0.1:1"}, TLS: true, TLSCAFile: file}
			s, err := New(context.Background(), "test", testBase, Deps{Logger: quietLog, Telemetry: telemetry.Nop("test"), OpsListener: opsLn},
				WithKafka(cfg))
			if err == nil || s != nil {
				t.Fatalf("New: %v, %v; want an error", s, err)
			}
			if !strings.Contains(err.Error(), "KAFKA_TLS_CA_FILE") || !strings.Contains(err.Error(), file) {
				t.Fatalf("New: %v; want KAFKA_TLS_CA_FILE and %s named", err, file)
			}
		})
	}
}

// Every Kafka client of a service shares the one transport and dialer New built: two
// publishers write through the service's transport, and KafkaSecurity hands readers its dialer.
func TestPublishersShareTheServiceTransport(t *testing.T) {
	caFile, _ := selfSigned(t)
	cfg := Kafka{Brokers: []string{"127.0.0.1:1"}, TLS: true, TLSCAFile: caFile}
	s, err := New(context.Background(), "test", testBase, Deps{Logger: quietLog, Telemetry: telemetry.Nop("test"), OpsListener: listen(t)},
		WithKafka(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, b := s.Publisher(), s.Publisher(eventbus.PublisherOptions{BatchSize: 10})
	ta, tb := a.Transport(), b.Transport()
	if ta == nil || ta != tb || ta != s.KafkaSecurity().Transport() {
		t.Fatalf("publishers' transports %p and %p, the service's %p; want one", ta, tb, s.KafkaSecurity().Transport())
	}
	if tr, ok := ta.(*kafka.Transport); !ok || tr == kafka.DefaultTransport || tr.TLS == nil || tr.TLS.RootCAs == nil {
		t.Fatalf("transport %#v; want the service's own, with its CA", ta)
	}
	if d := s.KafkaSecurity().Dialer(); d != s.KafkaSecurity().Dialer() || d == kafka.DefaultDialer || d.TLS == nil {
		t.Fatalf("dialer %+v; want the service's one, with TLS", d)
	}
}

// A service whose assembly fails after New stops what it built: Close shuts the ops port that
// New started serving, and after Run it does nothing.
func TestCloseStopsWhatWasBuilt(t *testing.T) {
	opsLn := listen(t)
	s, err := New(context.Background(), "test", testBase, Deps{Logger: quietLog, Telemetry: telemetry.Nop("test"), OpsListener: opsLn})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	s.OnStop("pool", func(context.Context) error { stopped = true; return nil })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !stopped {
		t.Fatal("the stop hook did not run")
	}
	if c, err := net.Dial("tcp", opsLn.Addr().String()); err == nil {
		c.Close()
		t.Fatal("the ops port still accepts connections")
	}
	if err := s.Close(); err != nil || !stopped {
		t.Fatalf("second Close: %v", err)
	}
}

var (
	testBase = Base{ShutdownTimeout: 10 * time.Second, InternalSecret: "0123456789abcdef"}
	quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))
)

// A tool reads the Kafka security of the environment as the service of its prefix does, and is
// plaintext without it.
func TestKafkaFromEnv(t *testing.T) {
	brokers := []string{"b1:9093", "b2:9093"}
	k, err := KafkaFromEnv("TOOLTEST_", brokers)
	if err != nil || k.TLS || k.SASLMechanism != SASLNone || len(k.Brokers) != 2 {
		t.Fatalf("unset: %+v, %v; want plaintext to both brokers", k, err)
	}
	t.Setenv("TOOLTEST_KAFKA_TLS", "true")
	t.Setenv("TOOLTEST_KAFKA_SASL_MECHANISM", "scram-sha-512")
	t.Setenv("TOOLTEST_KAFKA_SASL_USERNAME", "bench")
	if _, err := KafkaFromEnv("TOOLTEST_", brokers); err == nil || !strings.Contains(err.Error(), "TOOLTEST_KAFKA_SASL_PASSWORD") {
		t.Fatalf("without a password: %v; want TOOLTEST_KAFKA_SASL_PASSWORD named", err)
	}
	t.Setenv("TOOLTEST_KAFKA_SASL_PASSWORD", "pw")
	k, err = KafkaFromEnv("TOOLTEST_", brokers)
	if err != nil || !k.TLS || k.SASLMechanism != SASLScramSHA512 || k.SASLUsername != "bench" {
		t.Fatalf("set: %+v, %v", k, err)
	}
}
