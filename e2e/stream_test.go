package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/ingest"
	"github.com/chainintel/chainintel/sim"
	"github.com/coder/websocket"
)

// The transfer stream through the edge on the simulator: a filter on the exchanges receives a
// deposit the simulator just made into an exchange's deposit address (how long after it
// appeared on Kafka is logged, not asserted), and the streamed Transfer is the one /transfers?base=<exchange>&flow=in
// returns, field for field.
func TestStreamSimulatedExchangeDeposit(t *testing.T) {
	p := Get(t)
	if len(p.Brokers) == 0 || p.Stack == nil {
		t.Skip("needs the local stack's simulator and Kafka")
	}
	var gc ingest.Config
	if err := config.Defaults(&gc); err != nil {
		t.Fatal(err)
	}
	w, err := sim.New(ingest.SimConfig(gc, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	depositOf := map[string]string{}
	var exchanges []string
	for _, e := range w.Entities() {
		if e.Type != "cex" {
			continue
		}
		exchanges = append(exchanges, e.ID)
		for _, a := range w.AddressesOf(e.ID, sim.RoleDeposit, "") {
			depositOf[a.Chain+"/"+a.Address] = e.ID
		}
	}
	if len(depositOf) == 0 {
		t.Fatal("the simulated world has no deposit addresses")
	}

	// The stream, through the edge, with the caller's key.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := http.Header{}
	h.Set("API-Key", p.KeyFor(t))
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	ws, resp, err := websocket.Dial(dctx, strings.Replace(p.URL, "http", "ws", 1)+"/ws/transfers", &websocket.DialOptions{HTTPHeader: h})
	dcancel()
	if err != nil {
		t.Fatalf("dial the stream through the edge: %v (%v)", err, resp)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	sub, _ := json.Marshal(map[string]any{"type": "subscribe", "id": "s1", "payload": map[string]any{"filters": map[string]any{"to": exchanges}}})
	if err := ws.Write(ctx, websocket.MessageText, sub); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	streamed := map[string]json.RawMessage{}
	acked := make(chan map[string]any, 1)
	go func() {
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				return
			}
			var m struct {
				Type    string          `json:"type"`
				Payload json.RawMessage `json:"payload"`
			}
			_ = json.Unmarshal(b, &m)
			switch m.Type {
			case "ack":
				var a map[string]any
				_ = json.Unmarshal(m.Payload, &a)
				acked <- a
			case "transfer":
				var tp struct {
					Transfer json.RawMessage `json:"transfer"`
				}
				_ = json.Unmarshal(m.Payload, &tp)
				var id struct {
					ID string `json:"id"`
				}
				_ = json.Unmarshal(tp.Transfer, &id)
				mu.Lock()
				streamed[id.ID] = tp.Transfer
				mu.Unlock()
			default:
				t.Errorf("stream sent %s", b)
			}
		}
	}()
	select {
	case a := <-acked:
		if a["success"] != true {
			t.Fatalf("subscribe: %v", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no ack for the subscribe")
	}

	// The deposit addresses intelligence has attributed by now: only a deposit into one of
	// them can match when it happens (a first deposit is attributed after it, and /transfers,
	// which resolves base when asked, finds it while the stream, matching as it goes, does not).
	var kmu sync.Mutex
	known := map[string]bool{}
	var addrs []string
	for k := range depositOf {
		_, a, _ := strings.Cut(k, "/")
		addrs = append(addrs, a)
	}
	refresh := func() {
		for start := 0; start < len(addrs); start += 1000 {
			r := p.Do(t, "POST", "/intelligence/address/batch", h.Get("API-Key"), map[string]any{"addresses": addrs[start:min(start+1000, len(addrs))]})
			var b struct {
				Addresses map[string]struct {
					DepositServiceID string `json:"depositServiceID"`
				} `json:"addresses"`
			}
			if r.Status != 200 {
				t.Errorf("address batch: %d %s", r.Status, r.Body)
				return
			}
			r.JSON(t, &b)
			kmu.Lock()
			for k, ex := range depositOf {
				_, a, _ := strings.Cut(k, "/")
				if info, ok := b.Addresses[a]; ok && info.DepositServiceID == ex {
					known[k] = true
				}
			}
			kmu.Unlock()
		}
	}
	refresh()
	go func() {
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
				refresh()
			}
		}
	}()

	// The deposits the simulator publishes from now on.
	type seen struct {
		tr *eventsv1.Transfer
		at time.Time
	}
	fresh := make(chan seen, 1024)
	c := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: p.Brokers, Security: p.KafkaSecurity, Group: "e2e-stream-" + randHex(4),
		Topic: eventsv1.TopicTransfers, StartAtEnd: true, MaxWait: 10 * time.Millisecond},
		func() *eventsv1.Transfer { return new(eventsv1.Transfer) },
		func(_ context.Context, batch []eventbus.Message[*eventsv1.Transfer]) error {
			for _, m := range batch {
				kmu.Lock()
				ok := known[m.Msg.Chain+"/"+m.Msg.To]
				kmu.Unlock()
				if ok {
					select {
					case fresh <- seen{m.Msg, time.Now()}:
					default:
					}
				}
			}
			return nil
		})
	go func() { _ = c.Run(ctx) }()

	deadline := time.After(90 * time.Second)
	for {
		var s seen
		select {
		case s = <-fresh:
		case <-deadline:
			t.Skip("no simulated deposit into a deposit address attributed before it within 90 s")
		}
		ex := depositOf[s.tr.Chain+"/"+s.tr.To]
		// Streamed (the bound only guards against a hang: latency is no claim of this test).
		var got json.RawMessage
		for time.Since(s.at) < 60*time.Second && got == nil {
			mu.Lock()
			got = streamed[s.tr.Id]
			mu.Unlock()
			if got == nil {
				time.Sleep(20 * time.Millisecond)
			}
		}
		if got == nil {
			mu.Lock()
			late := streamed[s.tr.Id] != nil
			mu.Unlock()
			t.Fatalf("deposit %s into %s's deposit address %s (%s) not streamed within 60 s of being on Kafka (arrived later: %v)", s.tr.Id, ex, s.tr.To, s.tr.Chain, late)
		}
		t.Logf("deposit %s into %s streamed %s after it was on Kafka", s.tr.Id, ex, time.Since(s.at).Round(time.Millisecond))
		// The same transfer from /transfers, compared as whole objects.
		path := fmt.Sprintf("/transfers?base=%s&flow=in&chains=%s&timeLast=1h&limit=1000", ex, s.tr.Chain)
		Eventually(t, 10*time.Second, func() error {
			r := p.Get(t, path)
			if r.Status != 200 {
				return fmt.Errorf("%d %s", r.Status, r.Body)
			}
			var list struct {
				Transfers []json.RawMessage `json:"transfers"`
			}
			r.JSON(t, &list)
			for _, x := range list.Transfers {
				var id struct {
					ID string `json:"id"`
				}
				_ = json.Unmarshal(x, &id)
				if id.ID != s.tr.Id {
					continue
				}
				if a, b := canon(t, x), canon(t, got); a != b {
					t.Fatalf("streamed transfer differs from /transfers:\nstream    %s\ntransfers %s", b, a)
				}
				return nil
			}
			return fmt.Errorf("deposit %s not in %s yet", s.tr.Id, path)
		})
		// Each delivered transfer is a credit the caller's usage shows under the stream route.
		Eventually(t, 30*time.Second, func() error {
			r := p.Do(t, "GET", "/analytics/endpoint-calls?period=24h", h.Get("API-Key"), nil)
			var u struct {
				DataPoints []struct {
					CreditBreakdown map[string]int64 `json:"creditBreakdown"`
				} `json:"dataPoints"`
			}
			if r.Status != 200 {
				return fmt.Errorf("endpoint-calls: %d %s", r.Status, r.Body)
			}
			r.JSON(t, &u)
			var n int64
			for _, d := range u.DataPoints {
				n += d.CreditBreakdown["/ws/transfers"]
			}
			if n < 1 {
				return fmt.Errorf("no stream credits in /analytics/endpoint-calls yet")
			}
			return nil
		})
		return
	}
}

func canon(t *testing.T, b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// REST sessions and v2 streams through the edge: made, connected to over the edge's WebSocket
// proxy, listed as connected, deleted.
func TestStreamSessionsThroughEdge(t *testing.T) {
	p := Get(t)
	key := p.KeyFor(t)
	r := p.Do(t, "POST", "/ws/v2/streams", key, map[string]any{"to": []string{"binance-sim"}, "chains": []string{"ethereum"}})
	var made struct {
		StreamID string `json:"streamId"`
	}
	if r.Status != 200 {
		t.Fatalf("POST /ws/v2/streams: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &made)
	if r := p.Do(t, "POST", "/ws/v2/streams", key, map[string]any{"chains": []string{"ethereum"}}); r.Status != 400 {
		t.Fatalf("unselective v2 filter: %d %s", r.Status, r.Body)
	}
	h := http.Header{}
	h.Set("API-Key", key)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, strings.Replace(p.URL, "http", "ws", 1)+"/ws/v2/transfers?stream_id="+made.StreamID, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("dial v2 through the edge: %v (%v)", err, resp)
	}
	defer ws.CloseNow()
	Eventually(t, 10*time.Second, func() error {
		var list []struct {
			StreamID    string `json:"streamId"`
			IsConnected bool   `json:"isConnected"`
		}
		r := p.Do(t, "GET", "/ws/v2/streams", key, nil)
		r.JSON(t, &list)
		if len(list) != 1 || list[0].StreamID != made.StreamID || !list[0].IsConnected {
			return fmt.Errorf("streams %s", r.Body)
		}
		return nil
	})
	var n struct {
		ActiveConnections int `json:"activeConnections"`
	}
	p.Do(t, "GET", "/ws/active_connections", key, nil).JSON(t, &n)
	if n.ActiveConnections != 1 {
		t.Fatalf("active connections %d", n.ActiveConnections)
	}
	if r := p.Do(t, "DELETE", "/ws/v2/streams/"+made.StreamID, key, nil); r.Status != 200 {
		t.Fatalf("DELETE stream: %d %s", r.Status, r.Body)
	}
	r = p.Do(t, "POST", "/ws/sessions", key, nil)
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	r.JSON(t, &sess)
	if r := p.Do(t, "GET", "/ws/sessions/"+sess.SessionID, key, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"isConnected":false`) {
		t.Fatalf("GET session: %d %s", r.Status, r.Body)
	}
	if p.DBURL != "" {
		if r := p.Do(t, "GET", "/ws/sessions/"+sess.SessionID, p.NewKey(t, "api", "org_admin"), nil); r.Status != 404 {
			t.Fatalf("another key reads the session: %d", r.Status)
		}
	}
}
