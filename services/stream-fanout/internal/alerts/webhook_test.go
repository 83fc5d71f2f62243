package alerts

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
)

// TestBlocked: the addresses a webhook may not connect to without AllowPrivate, in every form
// that reaches private or reserved space, and public ones it may.
func TestBlocked(t *testing.T) {
	for _, c := range []struct {
		name, addr string
		want       bool
	}{
		{"loopback v4", "127.0.0.1", true},
		{"loopback v6", "::1", true},
		{"RFC 1918 10/8", "10.1.2.3", true},
		{"RFC 1918 172.16/12", "172.16.0.1", true},
		{"RFC 1918 192.168/16", "192.168.1.1", true},
		{"link-local v4 (metadata)", "169.254.169.254", true},
		{"link-local v6", "fe80::1", true},
		{"link-local v6 zoned", "fe80::1%eth0", true},
		{"unspecified v4", "0.0.0.0", true},
		{"unspecified v6", "::", true},
		{"multicast v4", "224.0.0.1", true},
		{"multicast v6", "ff02::1", true},
		{"this network", "0.1.2.3", true},
		{"carrier NAT", "100.64.0.1", true},
		{"broadcast", "255.255.255.255", true},
		{"unique local", "fd00::1", true},
		{"IPv4-mapped loopback", "::ffff:127.0.0.1", true},
		{"IPv4-mapped private", "::ffff:10.0.0.1", true},
		{"IPv4-mapped metadata", "::ffff:169.254.169.254", true},
		{"IPv4-compatible private", "::10.0.0.1", true},
		{"IPv4-compatible loopback", "::127.0.0.1", true},
		{"IPv4-compatible public", "::8.8.8.8", true},
		{"SIIT private", "::ffff:0:10.0.0.1", true},
		{"SIIT metadata", "::ffff:0:169.254.169.254", true},
		{"NAT64 well-known private", "64:ff9b::10.0.0.1", true},
		{"NAT64 well-known metadata", "64:ff9b::a9fe:a9fe", true},
		{"NAT64 local-use", "64:ff9b:1::a00:1", true},
		{"NAT64 local-use zoned", "64:ff9b:1::a00:1%eth0", true},
		{"6to4 private", "2002:a00:1::1", true},
		{"6to4 public", "2002:808:808::1", true},
		{"Teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2", true},
		{"IPv6 documentation", "2001:db8::1", true},
		{"site-local", "fec0::1", true},
		{"site-local top", "feff:ffff::1", true},
		{"IETF protocol assignments", "192.0.0.8", true},
		{"TEST-NET-1", "192.0.2.1", true},
		{"benchmarking low", "198.18.0.1", true},
		{"benchmarking high", "198.19.255.254", true},
		{"TEST-NET-2", "198.51.100.7", true},
		{"TEST-NET-3", "203.0.113.9", true},
		{"reserved 240/4", "240.0.0.1", true},
		{"reserved 250/8", "250.1.2.3", true},
		{"IPv4-mapped reserved", "::ffff:198.18.0.1", true},
		{"public v4", "8.8.8.8", false},
		{"public v4 Cloudflare", "1.1.1.1", false},
		{"public v4 beside benchmarking", "198.20.0.1", false},
		{"public v4 beside 192.0.0/24", "192.0.1.1", false},
		{"IPv4-mapped public", "::ffff:8.8.8.8", false},
		{"public v6 Google", "2001:4860:4860::8888", false},
		{"public v6 Cloudflare", "2606:4700:4700::1111", false},
	} {
		if got := blocked(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("%s: blocked(%s) = %v, want %v", c.name, c.addr, got, c.want)
		}
	}
	var refused *refusedAddressError
	for _, a := range []string{"127.0.0.1:443", "[::10.0.0.1]:443", "[64:ff9b::a9fe:a9fe]:80", "[2002:a00:1::1]:443", "198.18.0.1:443"} {
		if err := refusePrivate("tcp", a, nil); !errors.As(err, &refused) {
			t.Errorf("refusePrivate(%s): %v", a, err)
		}
	}
	for _, a := range []string{"[2001:4860:4860::8888]:443", "8.8.8.8:443"} {
		if err := refusePrivate("tcp", a, nil); err != nil {
			t.Errorf("refusePrivate of a public address %s: %v", a, err)
		}
	}
}

// TestSign: the signature a receiver verifies, computed as the docs say.
func TestSign(t *testing.T) {
	body := []byte(`{"alertId":1}`)
	m := hmac.New(sha256.New, []byte("s"))
	m.Write([]byte("1700000000." + string(body)))
	if got, want := Sign("s", 1700000000, body), "sha256="+hex.EncodeToString(m.Sum(nil)); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

// The receiver's code of docs/stream-fanout.md ("Alerts (webhooks)"), copied as it is there
// (TestVerifyAsDocumented checks the copy is the page's, byte for byte):

// verify reports whether a webhook POST is chainintel's. secret is the method's secret as
// POST /user/alert_methods showed it (64 hex characters), used as is: not hex-decoded.
func verify(secret string, r *http.Request, body []byte) bool {
	ts, err := strconv.ParseInt(r.Header.Get("X-Chainintel-Timestamp"), 10, 64)
	if err != nil || math.Abs(time.Since(time.Unix(ts, 0)).Seconds()) > 300 {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret)) // the 64 characters' bytes are the key
	m.Write([]byte(r.Header.Get("X-Chainintel-Timestamp") + "." + string(body)))
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	return hmac.Equal([]byte(want), []byte(r.Header.Get("X-Chainintel-Signature")))
}

// received is what TestVerifyAsDocumented's receiver saw of one POST.
type received struct {
	verified, hexDecoded, tampered bool
	header                         string
	body                           Body
}

// TestVerifyAsDocumented: a POST as the deliverer sends it, with a secret shaped as user-labels
// makes them, verifies with the docs' code and the secret's characters as the key; the key
// hex-decoded and a body changed do not; the signed body carries the delivery id. The docs'
// code is the copy above, so the page cannot drift from what is sent.
func TestVerifyAsDocumented(t *testing.T) {
	const secret = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	seen := make(chan received, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		decoded, _ := hex.DecodeString(secret)
		g := received{verified: verify(secret, r, body), hexDecoded: verify(string(decoded), r, body),
			tampered: verify(secret, r, append(body[:len(body):len(body)], ' ')), header: r.Header.Get(HeaderDelivery)}
		if err := json.Unmarshal(body, &g.body); err != nil {
			t.Errorf("the body: %v", err)
		}
		seen <- g
	}))
	defer srv.Close()
	d := &Deliverer{o: Options{Now: time.Now}, http: newWebhookClient(true)}
	sent := Body{AlertID: 7, AlertName: "whale watch", DeliveryID: "3f1c2a1e1d2b4c3d8e9f0a1b2c3d4e5f",
		Transfers: []json.RawMessage{json.RawMessage(`{"txHash":"0x01"}`)}}
	body, err := json.Marshal(sent)
	if err != nil {
		t.Fatal(err)
	}
	if at := d.post(context.Background(), srv.URL, secret, sent.DeliveryID, body); !at.ok {
		t.Fatalf("post: %+v", at)
	}
	g := <-seen
	if !g.verified || g.hexDecoded || g.tampered {
		t.Fatalf("verified %v (want true), with the key hex-decoded %v, the body changed %v (want false)",
			g.verified, g.hexDecoded, g.tampered)
	}
	if g.body.DeliveryID != sent.DeliveryID || g.header != sent.DeliveryID {
		t.Fatalf("the body's deliveryId %q, the header %q, want %q", g.body.DeliveryID, g.header, sent.DeliveryID)
	}
	if doc, code := docsVerify(t), ownVerify(t); doc != code {
		t.Fatalf("docs/stream-fanout.md's receiver code:\n%s\nis not this test's copy:\n%s", doc, code)
	}
}

// docsVerify is the Go block of docs/stream-fanout.md's "Alerts (webhooks)" section.
func docsVerify(t *testing.T) string {
	b, err := os.ReadFile("../../../../docs/stream-fanout.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Alerts (webhooks)\n")
	if !ok {
		t.Fatal(`docs/stream-fanout.md has no "## Alerts (webhooks)" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, code, ok := strings.Cut(sec, "\n```go\n")
	if !ok {
		t.Fatal(`docs/stream-fanout.md's "Alerts (webhooks)" has no Go block`)
	}
	code, _, _ = strings.Cut(code, "\n```")
	return code
}

// ownVerify is the source of verify above, from its doc comment to its closing brace.
func ownVerify(t *testing.T) string {
	b, err := os.ReadFile("webhook_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, code, ok := strings.Cut(string(b), "\n\n// verify reports")
	if !ok {
		t.Fatal("webhook_test.go has no verify")
	}
	code, _, _ = strings.Cut("// verify reports"+code, "\n}\n")
	return code + "\n}"
}

// TestRawOf: an alert's bounds are decimal strings; one that is not is a decode error naming
// the field.
func TestRawOf(t *testing.T) {
	r, err := rawOf(Alert{From: []string{"binance"}, USDGte: "1000.5", ValueLte: "2"})
	if err != nil || r.USDGte == nil || float64(*r.USDGte) != 1000.5 || r.ValueLte == nil || float64(*r.ValueLte) != 2 || r.USDLte != nil {
		t.Fatalf("rawOf = %+v, %v", r, err)
	}
	if _, err := rawOf(Alert{USDLte: "abc"}); err == nil || err.Error() != `usdLte: must be a number or a decimal string, got "abc"` {
		t.Fatalf("rawOf of a bad bound: %v", err)
	}
}

// FuzzAlertFilter: whatever user-labels hands over as an alert, its filter is parsed or
// refused with an error naming the field, never a panic.
func FuzzAlertFilter(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"from":["binance"],"usdGte":"1000"}`,
		`{"id":2,"base":["0x28c6c06298d514db089934071355e5743bf21d60"],"tokens":["ethereum"],"chains":["ethereum"],"valueLte":"5"}`,
		`{"id":3,"to":["!type:cex","deposit:binance"],"usdGte":"1e999"}`,
		`{"id":4,"from":["6f1c2a1e-1d2b-4c3d-8e9f-0a1b2c3d4e5f"],"usdLte":"-1"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var a Alert
		if json.Unmarshal(b, &a) != nil {
			return
		}
		raw, err := rawOf(a)
		if err == nil {
			_, err = filter.Parse(raw, filter.Options{})
		}
		var fe *filter.Error
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("error %v is not a *filter.Error", err)
		}
	})
}
