package alerts

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// Limits of one webhook POST.
const (
	// postTimeout bounds one POST, from the dial to the answer's end.
	postTimeout = 10 * time.Second
	// maxAnswerBytes is the most of an answer's body read (for the log of a refusal).
	maxAnswerBytes = 4 << 10
)

// Headers of a webhook POST.
const (
	HeaderDelivery  = "X-Chainintel-Delivery"
	HeaderTimestamp = "X-Chainintel-Timestamp"
	HeaderSignature = "X-Chainintel-Signature"
)

// Sign is the X-Chainintel-Signature value of body sent at unix seconds ts with secret:
// "sha256=" and the hex HMAC-SHA256 of "<ts>.<body>".
func Sign(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// refusedAddressError is a webhook whose address the dialer refuses (loopback, private, ...).
type refusedAddressError struct{ addr string }

func (e *refusedAddressError) Error() string {
	return fmt.Sprintf("the webhook's address %s is loopback, private, link-local, reserved, unspecified or multicast", e.addr)
}

// extraBlocked are ranges refused besides those netip classifies (loopback, RFC 1918, fc00::/7,
// link-local, unspecified, multicast). They are checked after unmapping ::ffff:a.b.c.d, so an
// IPv4-mapped address is judged as its IPv4 address. The transition forms (IPv4-compatible,
// SIIT, NAT64, 6to4, Teredo) embed an IPv4 address netip does not unmap, which a host or
// gateway may reach through them, private space included: they are refused whole rather than
// decoded. The rest are reserved, not routed on the Internet, or only for documentation.
var extraBlocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),          // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),      // carrier NAT: clouds' internal addresses
	netip.MustParsePrefix("192.0.0.0/24"),       // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),       // documentation (TEST-NET-1)
	netip.MustParsePrefix("198.18.0.0/15"),      // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"),    // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),     // documentation (TEST-NET-3)
	netip.MustParsePrefix("240.0.0.0/4"),        // reserved
	netip.MustParsePrefix("255.255.255.255/32"), // broadcast (also in 240.0.0.0/4; named for the reader)
	netip.MustParsePrefix("::/96"),              // IPv4-compatible ::a.b.c.d (deprecated)
	netip.MustParsePrefix("::ffff:0:0:0/96"),    // SIIT IPv4-translated ::ffff:0:a.b.c.d
	netip.MustParsePrefix("64:ff9b::/96"),       // NAT64, well-known prefix
	netip.MustParsePrefix("64:ff9b:1::/48"),     // NAT64, local-use prefix
	netip.MustParsePrefix("2001::/32"),          // Teredo
	netip.MustParsePrefix("2001:db8::/32"),      // documentation
	netip.MustParsePrefix("2002::/16"),          // 6to4
	netip.MustParsePrefix("fec0::/10"),          // site-local (deprecated)
}

// blocked reports whether a webhook may not connect to ip.
func blocked(ip netip.Addr) bool {
	// A zoned address (fe80::1%eth0) never matches a prefix (Prefix.Contains), so the zone goes.
	ip = ip.Unmap().WithZone("")
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range extraBlocked {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// refusePrivate is the webhook dialer's Control: it runs on the address being connected to,
// after name resolution, so a name resolving (or rebinding) to a refused address is refused too.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return &refusedAddressError{address}
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || blocked(ip) {
		return &refusedAddressError{address}
	}
	return nil
}

// newWebhookClient is the client webhooks are POSTed with: no proxy, no redirects followed,
// and, unless allowPrivate, no connection to an address blocked refuses.
func newWebhookClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = refusePrivate
	}
	tr := &http.Transport{Proxy: nil, DialContext: d.DialContext, ForceAttemptHTTP2: true, MaxIdleConns: 256,
		MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 5 * time.Second,
		ResponseHeaderTimeout: postTimeout}
	return &http.Client{Transport: tr, Timeout: postTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// attempt is the outcome of one POST.
type attempt struct {
	ok bool
	// retry says a failure may pass (a 5xx, 408 or 429, a network error); otherwise reason
	// names why it will not.
	retry  bool
	reason string
	err    error
}

// post sends one delivery's body to url, signed with secret at the current time.
func (d *Deliverer) post(ctx context.Context, url, secret, deliveryID string, body []byte) attempt {
	ctx, cancel := context.WithTimeout(ctx, postTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return attempt{reason: "url", err: err}
	}
	ts := d.now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "chainintel-alerts")
	req.Header.Set(HeaderDelivery, deliveryID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, Sign(secret, ts, body))
	resp, err := d.http.Do(req)
	if err != nil {
		var refused *refusedAddressError
		if errors.As(err, &refused) {
			return attempt{reason: "refused_address", err: refused}
		}
		return attempt{retry: true, err: err}
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	switch s := resp.StatusCode; {
	case s/100 == 2:
		return attempt{ok: true}
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500:
		return attempt{retry: true, err: fmt.Errorf("the webhook answered %d: %.200q", s, answer)}
	case s/100 == 3:
		return attempt{reason: "redirect", err: fmt.Errorf("the webhook answered %d (redirects are not followed)", s)}
	default:
		return attempt{reason: "status_4xx", err: fmt.Errorf("the webhook answered %d: %.200q", s, answer)}
	}
}
