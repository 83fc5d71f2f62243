package streamfanout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

// additionsLabels is user-labels where user-owner has added addresses to operator entity exch
// (only_add), set by the test; nobody has labels or user entities, and nobody else additions.
type additionsLabels struct {
	mu    sync.Mutex
	added []string
	url   string
}

func newAdditionsLabels(t *testing.T) *additionsLabels {
	l := &additionsLabels{}
	signer := httpx.NewSigner(secret)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		id, err := signer.Verify(r.Header, timeNow())
		if err != nil {
			http.Error(rw, "no identity", 401)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/user/labels" || r.URL.Path == "/user/entities":
			_, _ = rw.Write([]byte(`[]`))
		case r.URL.Path == "/internal/additions/exch" && id.UserID == "user-owner":
			l.mu.Lock()
			b, _ := json.Marshal(map[string]any{"addresses": map[string][]string{"evm": l.added}})
			l.mu.Unlock()
			_, _ = rw.Write(b)
		case strings.HasPrefix(r.URL.Path, "/internal/additions/"):
			_, _ = rw.Write([]byte(`{"addresses":{}}`))
		default:
			http.Error(rw, `{"error":"not found"}`, 404)
		}
	}))
	t.Cleanup(srv.Close)
	l.url = srv.URL
	return l
}

// set makes addrs user-owner's additions to exch.
func (l *additionsLabels) set(addrs ...string) {
	l.mu.Lock()
	l.added = append([]string{}, addrs...)
	l.mu.Unlock()
}

// announce publishes what user-labels publishes after an only_add on exch by user.
func (w *world) announce(user string, addrs ...string) {
	w.t.Helper()
	ch := &eventsv1.UserChange{UserId: user, Kind: eventsv1.UserChange_KIND_ENTITY_ADDITIONS, Op: eventsv1.UserChange_OP_UPSERT, EntityId: "exch"}
	for _, a := range addrs {
		ch.Addresses = append(ch.Addresses, &eventsv1.AddressRef{ChainType: "evm", Address: a})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.pub.Publish(ctx, eventbus.Event{Topic: eventsv1.TopicUserChanges, Key: user, Msg: ch}); err != nil {
		w.t.Fatal(err)
	}
}

// transferJSON is the Transfer a subscriber is sent for tr; attributed names the addresses the
// read model holds as exch's.
func transferJSON(tr *eventsv1.Transfer, attributed ...string) string {
	side := func(a string) string {
		ent := ""
		if slices.Contains(attributed, a) {
			ent = `"serviceEntity":{"id":"exch","name":"EXCH","note":"","type":"cex","service":null},`
		}
		return `{"address":"` + a + `","chain":"ethereum",` + ent + `"contract":false,"isUserAddress":false}`
	}
	return `{"id":"` + tr.Id + `","transactionHash":"` + tr.TransactionHash + `","blockHash":"` + tr.BlockHash +
		`","blockNumber":` + jsonNum(tr.BlockNumber) + `,"blockTimestamp":"` + time.UnixMilli(tr.BlockTimeMs).UTC().Format(time.RFC3339Nano) +
		`","chain":"ethereum","fromAddress":` + side(tr.From) + `,"toAddress":` + side(tr.To) +
		`,"fromIsContract":false,"toIsContract":false,"tokenId":"ethereum","tokenName":"Ether","tokenSymbol":"ETH","tokenDecimals":18,"unitValue":1.5,` +
		fmt.Sprintf(`"historicalUSD":%v,"type":"external"}`, tr.GetHistoricalUsd())
}

// sent is one transfer message: tr for the filter alertId.
type sent struct {
	alertID string
	tr      *eventsv1.Transfer
}

// expectDeliveries reads len(want) messages, which must be want's whole transfer messages, in
// the order of their transfers (the filters one transfer matched in any order); attributed as
// for transferJSON.
func (c *client) expectDeliveries(attributed []string, want ...sent) {
	c.t.Helper()
	var got, exp []string
	canon := func(b []byte) string {
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			c.t.Fatalf("not JSON: %s", b)
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	flush := func() {
		slices.Sort(got)
		slices.Sort(exp)
		if !slices.Equal(got, exp) {
			c.t.Fatalf("deliveries\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(exp, "\n     "))
		}
		got, exp = nil, nil
	}
	for i, d := range want {
		if i > 0 && want[i-1].tr != d.tr {
			flush()
		}
		got = append(got, canon(c.next().raw))
		exp = append(exp, canon([]byte(`{"type":"transfer","payload":{"alertId":"`+d.alertID+`","transfer":`+transferJSON(d.tr, attributed...)+`}}`)))
	}
	flush()
}

// subscribeAll subscribes filters in order and returns their filter ids and the session.
func (c *client) subscribeAll(filters ...map[string]any) ([]string, string) {
	c.t.Helper()
	var ids []string
	var sess string
	for _, f := range filters {
		id, s := c.subscribe(f)
		ids, sess = append(ids, id), s
	}
	return ids, sess
}

// TestOperatorAdditionsMatchTheirOwner: a filter naming an operator entity (base, from, to, an
// exclusion) matches the caller's own additions to it (PUT /user/entities/only_add/<entity>) as
// addresses of the entity, as /transfers?base=<entity> does for that caller, and never another
// caller's: another caller's identical filters match only what the read model attributes. The
// additions are those user-labels holds when the filter is subscribed.
func TestOperatorAdditionsMatchTheirOwner(t *testing.T) {
	w := newWorld(t)
	ul := newAdditionsLabels(t)
	exch, added, other := addr(80), addr(81), addr(82)
	ul.set("0x" + strings.ToUpper(added[2:])) // matched in its canonical form
	w.attribute(exch, "exch", "cex", "")
	r := w.start(func(c *streamfanout.Config) { c.UserLabelsURL = ul.url })
	filters := []map[string]any{
		{"base": []string{"exch"}},
		{"from": []string{"exch"}},
		{"to": []string{"exch"}},
		{"from": []string{other}, "to": []string{"!exch"}},
	}
	owner := w.dial(r, ident("owner"), "")
	of, _ := owner.subscribeAll(filters...)
	stranger := w.dial(r, ident("stranger"), "")
	sf, _ := stranger.subscribeAll(filters...)

	out, in, marker := transferMsg(added, other, 5), transferMsg(other, added, 6), transferMsg(exch, other, 7)
	w.publish(out, in, marker)
	att := []string{exch}
	owner.expectDeliveries(att,
		sent{of[0], out}, sent{of[1], out},
		sent{of[0], in}, sent{of[2], in},
		sent{of[0], marker}, sent{of[1], marker})
	stranger.expectDeliveries(att,
		sent{sf[3], in},
		sent{sf[0], marker}, sent{sf[1], marker})
}
