package feed

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The feed reads a topic from a broker that takes TLS and SASL/SCRAM, with the security the
// service builds from its configuration; a wrong password is refused.
func TestFeedOverTLSAndSCRAM(t *testing.T) {
	caFile, cert := selfSigned(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(2),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "fanout", "pw-512"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg := service.Kafka{Brokers: c.ListenAddrs(), TLS: true, TLSCAFile: caFile,
		SASLMechanism: service.SASLScramSHA512, SASLUsername: "fanout", SASLPassword: "pw-512"}
	sec, err := cfg.Security()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topic = "test.feed.v1"
	if err := eventbus.EnsureTopics(ctx, cfg.Brokers, sec, 1, []eventbus.TopicSpec{{Name: topic, Partitions: 2}}); err != nil {
		t.Fatal(err)
	}
	pub := eventbus.NewPublisher(cfg.Brokers, eventbus.PublisherOptions{Security: sec})
	defer pub.Close()
	const n = 10
	for i := range n {
		if err := pub.Publish(ctx, eventbus.Event{Topic: topic, Key: fmt.Sprint(i), Msg: wrapperspb.String(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}

	defer sec.Close()
	tp := Topic{Brokers: cfg.Brokers, Security: sec, Name: topic}
	first, err := tp.Offsets(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	last, err := tp.Offsets(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for p, from := range first {
		gaps, err := tp.Range(ctx, p, from, last[p], func(kafka.Message) { got++ })
		if err != nil || len(gaps) > 0 {
			t.Fatal(gaps, err)
		}
	}
	if got != n {
		t.Fatalf("read %d records, want %d", got, n)
	}

	wrong := cfg
	wrong.SASLPassword = "nope"
	wsec, err := wrong.Security()
	if err != nil {
		t.Fatal(err)
	}
	defer wsec.Close()
	if _, err := (Topic{Brokers: cfg.Brokers, Security: wsec, Name: topic}).Partitions(ctx); err == nil {
		t.Fatal("a wrong password listed the partitions")
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 to a PEM file.
func selfSigned(t *testing.T) (string, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kfake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
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
