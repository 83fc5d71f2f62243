package alerts

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/netip"
	"testing"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
)

// TestBlocked: the addresses a webhook may not connect to without AllowPrivate.
func TestBlocked(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true,
		"169.254.169.254": true, "fe80::1": true, "0.0.0.0": true, "::": true, "224.0.0.1": true, "ff02::1": true,
		"100.64.0.1": true, "255.255.255.255": true, "fd00::1": true, "::ffff:127.0.0.1": true, "::ffff:10.0.0.1": true,
		"8.8.8.8": false, "2001:4860:4860::8888": false, "1.1.1.1": false,
	} {
		if got := blocked(netip.MustParseAddr(addr)); got != want {
			t.Errorf("blocked(%s) = %v, want %v", addr, got, want)
		}
	}
	var refused *refusedAddressError
	if err := refusePrivate("tcp", "127.0.0.1:443", nil); !errors.As(err, &refused) {
		t.Errorf("refusePrivate of loopback: %v", err)
	}
	if err := refusePrivate("tcp", "[2001:4860:4860::8888]:443", nil); err != nil {
		t.Errorf("refusePrivate of a public address: %v", err)
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
