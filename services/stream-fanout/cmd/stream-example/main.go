// Command stream-example is a small client of the transfer stream: it subscribes with a filter,
// prints every matching transfer, and on a dropped connection reconnects with its sessionId so
// nothing matched meanwhile is missed. CHAININTEL_SESSION_ID resumes a session at start (one an
// earlier run printed in its ack): stopped with Ctrl-C and started again with it within 5
// minutes, it is sent what was matched in between. A session that no longer exists (expired, or
// the stream's Redis lost it) is answered NO_SESSION, and the example subscribes afresh.
//
//	make run     # in another terminal: prints the URL and a dev API key
//	CHAININTEL_URL=http://127.0.0.1:8080 CHAININTEL_API_KEY=<key> \
//	  go run ./services/stream-fanout/cmd/stream-example '{"to":["binance-sim"]}'
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/coder/websocket"
)

func main() {
	base := os.Getenv("CHAININTEL_URL")
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	key := os.Getenv("CHAININTEL_API_KEY")
	filter := `{"to":["binance-sim"]}`
	if len(os.Args) > 1 {
		filter = os.Args[1]
	}
	if key == "" || !json.Valid([]byte(filter)) {
		fmt.Fprintln(os.Stderr, "usage: CHAININTEL_API_KEY=<key> [CHAININTEL_URL=...] stream-example '<filter JSON>'")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	session := os.Getenv("CHAININTEL_SESSION_ID")
	for ctx.Err() == nil {
		var err error
		session, err = stream(ctx, base, key, filter, session)
		if ctx.Err() != nil {
			return
		}
		var refused *refusal
		if errors.As(err, &refused) && refused.status >= 400 && refused.status < 500 && refused.status != http.StatusTooManyRequests {
			// A key the edge refuses (401, 403) stays refused: retrying would loop for ever.
			fmt.Fprintf(os.Stderr, "the stream refused the connection: %v\n", err)
			os.Exit(1)
		}
		if session == "" {
			fmt.Fprintf(os.Stderr, "connection ended (%v); connecting again\n", err)
		} else {
			fmt.Fprintf(os.Stderr, "connection ended (%v); reconnecting to session %s\n", err, session)
		}
		time.Sleep(time.Second)
	}
}

// refusal is a handshake the edge or the stream answered with an HTTP status instead of 101.
type refusal struct {
	status int
	body   string
}

func (r *refusal) Error() string { return fmt.Sprintf("HTTP %d %s", r.status, r.body) }

type message struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// stream serves one connection: subscribe (or reconnect to session), then print what comes.
// It returns the session to reconnect to.
func stream(ctx context.Context, base, key, filter, session string) (string, error) {
	h := http.Header{}
	h.Set("API-Key", key)
	c, resp, err := websocket.Dial(ctx, strings.Replace(base, "http", "ws", 1)+"/ws/transfers", &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			return session, &refusal{status: resp.StatusCode, body: strings.TrimSpace(string(body))}
		}
		return session, err
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	subscribe := fmt.Sprintf(`{"type":"subscribe","id":"1","payload":{"filters":%s}}`, filter)
	first := subscribe
	if session != "" {
		first = fmt.Sprintf(`{"type":"reconnect","id":"1","payload":{"sessionId":%q}}`, session)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(first)); err != nil {
		return session, err
	}
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return session, err
		}
		var m message
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		switch m.Type {
		case "ack":
			var a struct {
				Data struct {
					SessionID string `json:"sessionId"`
				} `json:"data"`
			}
			_ = json.Unmarshal(m.Payload, &a)
			if a.Data.SessionID != "" {
				session = a.Data.SessionID
			}
			fmt.Fprintf(os.Stderr, "ack %s\n", m.Payload)
		case "transfer":
			printTransfer(m.Payload)
		case "error":
			fmt.Fprintf(os.Stderr, "error %s\n", m.Payload)
			var e struct {
				Code      string `json:"code"`
				MessageID string `json:"messageId"`
			}
			_ = json.Unmarshal(m.Payload, &e)
			if e.Code == "NO_SESSION" && e.MessageID == "1" && session != "" {
				// The session is gone: start a new one with the filter.
				session = ""
				if err := c.Write(ctx, websocket.MessageText, []byte(subscribe)); err != nil {
					return session, err
				}
			}
		default:
			fmt.Fprintf(os.Stderr, "%s %s\n", m.Type, m.Payload)
		}
	}
}

// printTransfer prints a transfer message's payload on one line.
func printTransfer(payload json.RawMessage) {
	var t struct {
		AlertID  string `json:"alertId"`
		Transfer struct {
			ID            string   `json:"id"`
			Chain         string   `json:"chain"`
			TokenSymbol   string   `json:"tokenSymbol"`
			UnitValue     float64  `json:"unitValue"`
			HistoricalUSD *float64 `json:"historicalUSD"`
			From          side     `json:"fromAddress"`
			To            side     `json:"toAddress"`
		} `json:"transfer"`
	}
	_ = json.Unmarshal(payload, &t)
	tr := t.Transfer
	usd := ""
	if tr.HistoricalUSD != nil {
		usd = fmt.Sprintf(" ($%.2f)", *tr.HistoricalUSD)
	}
	fmt.Printf("[%s] %s %s %.6g %s%s %s -> %s\n", t.AlertID, tr.Chain, tr.ID, tr.UnitValue, tr.TokenSymbol, usd, tr.From.name(), tr.To.name())
}

// side is the part of an AddressInfo the example prints.
type side struct {
	Address       string `json:"address"`
	ServiceEntity *struct {
		ID string `json:"id"`
	} `json:"serviceEntity"`
	DepositServiceID string `json:"depositServiceID"`
}

func (s side) name() string {
	switch {
	case s.ServiceEntity != nil:
		return s.ServiceEntity.ID
	case s.DepositServiceID != "":
		return s.DepositServiceID + " deposit " + s.Address
	}
	return s.Address
}
