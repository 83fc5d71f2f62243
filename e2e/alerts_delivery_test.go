package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// delivery is one webhook POST as the receiver saw it.
type delivery struct {
	header http.Header
	body   []byte
}

// side is a transfer's party as a Transfer renders it.
type side struct {
	ServiceEntity *struct {
		ID string `json:"id"`
	} `json:"serviceEntity"`
	DepositServiceID *string `json:"depositServiceID"`
}

// is reports whether the party is entity's address or one of its deposit addresses.
func (s side) is(entity string) bool {
	return s.ServiceEntity != nil && s.ServiceEntity.ID == entity || s.DepositServiceID != nil && *s.DepositServiceID == entity
}

// An alert created through the edge is delivered: the local stack's stream-fanout loads it,
// matches the simulator's transfers into binance-sim and POSTs them to the caller's webhook (a
// receiver on loopback, which the local stack allows), signed with the method's secret, and
// every transfer of the first delivery touches the entity.
func TestAlertDeliveredToWebhook(t *testing.T) {
	p := Get(t)
	if len(p.Brokers) == 0 || p.Stack == nil {
		t.Skip("needs the local stack's simulator, stream-fanout and Kafka")
	}
	var mu sync.Mutex
	var got []delivery
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, delivery{header: r.Header.Clone(), body: b})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()

	key := p.NewKey(t, "api", "individual")
	r := p.Do(t, http.MethodPost, "/user/alert_methods", key, map[string]any{"url": recv.URL + "/hook"})
	var m struct {
		ID     int64  `json:"id"`
		Secret string `json:"secret"`
	}
	if r.Status != 200 {
		t.Fatalf("POST /user/alert_methods: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &m)
	r = p.Do(t, http.MethodPost, "/user/alerts", key, map[string]any{"name": "binance flows", "enabled": true,
		"base": []string{"binance-sim"}, "alertMethodId": m.ID})
	if r.Status != 200 {
		t.Fatalf("POST /user/alerts: %d %s", r.Status, r.Body)
	}
	var id int64
	r.JSON(t, &id)
	defer p.Do(t, http.MethodDelete, fmt.Sprintf("/user/alerts/%d", id), key, nil)

	var first delivery
	Eventually(t, 2*time.Minute, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(got) == 0 {
			return fmt.Errorf("no delivery yet")
		}
		first = got[0]
		return nil
	})
	ts, sig := first.header.Get("X-Chainintel-Timestamp"), first.header.Get("X-Chainintel-Signature")
	mac := hmac.New(sha256.New, []byte(m.Secret))
	mac.Write([]byte(ts + "." + string(first.body)))
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); sig != want || first.header.Get("X-Chainintel-Delivery") == "" {
		t.Fatalf("signature %q, want %q (delivery id %q)", sig, want, first.header.Get("X-Chainintel-Delivery"))
	}
	var body struct {
		AlertID   int64             `json:"alertId"`
		Transfers []json.RawMessage `json:"transfers"`
	}
	if err := json.Unmarshal(first.body, &body); err != nil || body.AlertID != id || len(body.Transfers) == 0 {
		t.Fatalf("delivery body (alert %d): %v %s", id, err, first.body)
	}
	for _, raw := range body.Transfers {
		var tr struct {
			ID              string `json:"id"`
			TransactionHash string `json:"transactionHash"`
			From            side   `json:"fromAddress"`
			To              side   `json:"toAddress"`
		}
		if err := json.Unmarshal(raw, &tr); err != nil {
			t.Fatal(err)
		}
		if !tr.From.is("binance-sim") && !tr.To.is("binance-sim") {
			t.Fatalf("delivered transfer %s touches no binance-sim address: %s", tr.ID, raw)
		}
	}
	t.Logf("%d deliveries, the first of %d transfers", len(got), len(body.Transfers))
}
