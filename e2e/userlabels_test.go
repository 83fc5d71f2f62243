package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// userLabelInfo is the part of an AddressInfo that carries a caller's own data.
type userLabelInfo struct {
	Address   string `json:"address"`
	UserLabel *struct {
		Name      string `json:"name"`
		Address   string `json:"address"`
		ChainType string `json:"chainType"`
	} `json:"userLabel"`
	UserEntity *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"userEntity"`
}

// ulExpectJSON fails unless r has status and a body equal (as JSON values) to want.
func ulExpectJSON(t *testing.T, what string, r Response, status int, want string) {
	t.Helper()
	var got, exp any
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.Status, status, r.Body)
	}
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("%s: body is not JSON: %s", what, r.Body)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Fatalf("%s:\n got %s\nwant %s", what, r.Body, want)
	}
}

// ulUserLabel returns the userLabel name /intelligence/address shows key for addr ("" for none).
func ulUserLabel(t *testing.T, p *Platform, key, addr string) (string, error) {
	r := p.Do(t, http.MethodGet, "/intelligence/address/"+addr+"?chain=ethereum", key, nil)
	if r.Status != 200 {
		return "", fmt.Errorf("/intelligence/address: %d %s", r.Status, r.Body)
	}
	var info userLabelInfo
	r.JSON(t, &info)
	if info.UserLabel == nil {
		return "", nil
	}
	if info.UserLabel.Address != addr || info.UserLabel.ChainType != "evm" {
		return "", fmt.Errorf("userLabel is for another address: %s", r.Body)
	}
	return info.UserLabel.Name, nil
}

// ulTransferTo returns the toAddress of the one transfer /transfers?base=addr shows key. The
// route is in the heavy class (1 request/s per key), so callers space their polls.
func ulTransferTo(t *testing.T, p *Platform, key, addr string) (userLabelInfo, error) {
	r := p.Do(t, http.MethodGet, "/transfers?base="+addr, key, nil)
	if r.Status != 200 {
		return userLabelInfo{}, fmt.Errorf("/transfers: %d %s", r.Status, r.Body)
	}
	var list struct {
		Transfers []struct {
			To userLabelInfo `json:"toAddress"`
		} `json:"transfers"`
	}
	r.JSON(t, &list)
	if len(list.Transfers) != 1 {
		return userLabelInfo{}, fmt.Errorf("want 1 transfer, got: %s", r.Body)
	}
	return list.Transfers[0].To, nil
}

// ulEventually is Eventually with a poll interval suited to heavy routes.
func ulEventually(t *testing.T, timeout, every time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not true after %s: %v", timeout, err)
		}
		time.Sleep(every)
	}
}

// A label created by one key shows as userLabel on that address in /intelligence/address and
// /transfers for that key's user only; another caller sees none of it, through the edge.
func TestUserLabelsThroughEdge(t *testing.T) {
	p := Get(t)
	alice := p.NewKey(t, "api", "org_admin")
	bob := p.NewKey(t, "api", "individual")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	hexPart := randHex(20)
	wallet := "0x" + hexPart
	upper := "0x" + strings.ToUpper(hexPart)

	// Created in any case, answered canonical.
	label := `{"name":"Alice's wallet","note":"e2e","address":"` + wallet + `","chainType":"evm"}`
	r := p.Do(t, http.MethodPost, "/user/labels", alice, []map[string]string{{"name": "Alice's wallet", "note": "e2e", "address": upper, "chainType": "evm"}})
	ulExpectJSON(t, "POST /user/labels", r, 200, "["+label+"]")
	if c := r.Header.Get("X-Credits-Used"); c != "1" {
		t.Errorf("POST /user/labels: X-Credits-Used %q, want 1", c)
	}
	ulExpectJSON(t, "alice GET /user/labels", p.Do(t, http.MethodGet, "/user/labels", alice, nil), 200, "["+label+"]")
	ulExpectJSON(t, "bob GET /user/labels", p.Do(t, http.MethodGet, "/user/labels", bob, nil), 200, `[]`)
	ulExpectJSON(t, "without a key", p.Do(t, http.MethodGet, "/user/labels", "", nil), 401, `{"error":"error validating API key"}`)

	// A transfer to the wallet.
	txHash := "0x" + randHex(32)
	usd := 12.5
	p.Publish(t, ctx, eventbus.Event{Topic: eventsv1.TopicTransfers, Key: eventsv1.ChainKey("ethereum", txHash), Msg: &eventsv1.Transfer{
		Id: txHash + "_ext", Chain: "ethereum", TransactionHash: txHash, BlockHash: "0x" + randHex(32), BlockNumber: 19000002,
		BlockTimeMs: time.Now().Truncate(time.Second).UnixMilli(), From: "0x" + randHex(20), To: wallet, TokenId: "ethereum",
		TokenName: "Ether", TokenSymbol: "ETH", TokenDecimals: 18, Amount: "1000000000000000", HistoricalUsd: &usd,
		Type: eventsv1.TransferType_TRANSFER_TYPE_EXTERNAL}})

	// /intelligence/address: Alice sees her label, Bob and the dev key do not.
	ulEventually(t, 30*time.Second, 200*time.Millisecond, func() error {
		name, err := ulUserLabel(t, p, alice, wallet)
		if err == nil && name != "Alice's wallet" {
			err = fmt.Errorf("alice's userLabel is %q", name)
		}
		return err
	})
	for who, key := range map[string]string{"bob": bob, "the dev key": p.APIKey} {
		if name, err := ulUserLabel(t, p, key, wallet); err != nil || name != "" {
			t.Fatalf("%s sees userLabel %q (%v)", who, name, err)
		}
	}

	// /transfers: the same, on the transfer's toAddress. From the first ask on, transfers may
	// cache alice's labels (up to its 60 s TTL).
	askedTransfers := time.Now()
	ulEventually(t, 30*time.Second, 1100*time.Millisecond, func() error {
		to, err := ulTransferTo(t, p, alice, wallet)
		if err == nil && (to.UserLabel == nil || to.UserLabel.Name != "Alice's wallet" || to.UserLabel.Address != wallet) {
			err = fmt.Errorf("alice's toAddress has no userLabel yet: %+v", to)
		}
		return err
	})
	to, err := ulTransferTo(t, p, bob, wallet)
	if err != nil || to.UserLabel != nil || to.UserEntity != nil {
		t.Fatalf("bob's toAddress: %+v %v", to, err)
	}

	// A rename reaches the other services (their caches follow user.changes.v1): transfers keeps
	// a caller's labels up to TRANSFERS_USER_LABELS_CACHE_TTL (60 s) from the first ask, so until
	// 55 s after it only the change event can have dropped the old name. The wait runs to then,
	// not for a fixed time that a loaded machine could spend before it even starts.
	label = `{"name":"Alice's cold wallet","note":"","address":"` + wallet + `","chainType":"evm"}`
	ulExpectJSON(t, "PUT /user/labels/{id}", p.Do(t, http.MethodPut, "/user/labels/"+upper+":evm", alice, map[string]string{"name": "Alice's cold wallet", "note": ""}), 200, label)
	ulEventually(t, 30*time.Second, 200*time.Millisecond, func() error {
		name, err := ulUserLabel(t, p, alice, wallet)
		if err == nil && name != "Alice's cold wallet" {
			err = fmt.Errorf("alice's userLabel is still %q", name)
		}
		return err
	})
	ulEventually(t, time.Until(askedTransfers.Add(55*time.Second)), 1100*time.Millisecond, func() error {
		to, err := ulTransferTo(t, p, alice, wallet)
		if err == nil && (to.UserLabel == nil || to.UserLabel.Name != "Alice's cold wallet") {
			err = fmt.Errorf("alice's toAddress still shows %+v", to.UserLabel)
		}
		return err
	})

	// Bob cannot touch Alice's label.
	ulExpectJSON(t, "bob PUT", p.Do(t, http.MethodPut, "/user/labels/"+wallet+":evm", bob, map[string]string{"name": "x", "note": ""}), 404,
		`{"error":"no label `+wallet+`:evm"}`)
	ulExpectJSON(t, "bob DELETE", p.Do(t, http.MethodDelete, "/user/labels/"+wallet+":evm", bob, nil), 200, `{"deleted":0}`)

	// Entities through the edge.
	r = p.Do(t, http.MethodPost, "/user/entities", alice, map[string]any{"name": "Alice's desk", "addresses": map[string][]string{"evm": {upper}}})
	var created []struct {
		ID        string    `json:"id"`
		CreatedAt time.Time `json:"createdAt"`
		UpdatedAt time.Time `json:"updatedAt"`
	}
	if r.JSON(t, &created); r.Status != 200 || len(created) != 1 {
		t.Fatalf("POST /user/entities: %d %s", r.Status, r.Body)
	}
	id := created[0].ID
	entity := func(name string, addrs string) string {
		return fmt.Sprintf(`{"id":%q,"name":%q,"note":"","type":"user","shareable":false,"linkShareable":false,"service":null,"addresses":%s,"createdAt":%q,"updatedAt":%q}`,
			id, name, addrs, created[0].CreatedAt.Format(time.RFC3339Nano), created[0].UpdatedAt.Format(time.RFC3339Nano))
	}
	ulExpectJSON(t, "POST /user/entities", r, 200, "["+entity("Alice's desk", `{"evm":["`+wallet+`"]}`)+"]")
	ulExpectJSON(t, "alice GET /user/entities/{id}", p.Do(t, http.MethodGet, "/user/entities/"+id, alice, nil), 200, entity("Alice's desk", `{"evm":["`+wallet+`"]}`))
	ulExpectJSON(t, "bob GET /user/entities/{id}", p.Do(t, http.MethodGet, "/user/entities/"+id, bob, nil), 404, `{"error":"no user entity \"`+id+`\""}`)
	ulExpectJSON(t, "bob GET /user/entities", p.Do(t, http.MethodGet, "/user/entities?includeAddresses=true", bob, nil), 200, `[]`)
	ulEventually(t, 30*time.Second, 200*time.Millisecond, func() error {
		r := p.Do(t, http.MethodGet, "/intelligence/address/"+wallet+"?chain=ethereum", alice, nil)
		var info userLabelInfo
		if r.JSON(t, &info); r.Status != 200 || info.UserEntity == nil || info.UserEntity.ID != id || info.UserEntity.Type != "user" {
			return fmt.Errorf("alice's userEntity: %d %s", r.Status, r.Body)
		}
		return nil
	})
	r = p.Do(t, http.MethodGet, "/intelligence/address/"+wallet+"?chain=ethereum", bob, nil)
	var bobInfo userLabelInfo
	if r.JSON(t, &bobInfo); r.Status != 200 || bobInfo.UserEntity != nil || bobInfo.UserLabel != nil {
		t.Fatalf("bob sees alice's data: %s", r.Body)
	}

	second := "0x" + randHex(20)
	r = p.Do(t, http.MethodPut, "/user/entities/only_add/"+id, alice, map[string]any{"addresses": map[string][]string{"evm": {second}}})
	if r.Status != 200 || !strings.Contains(string(r.Body), second) {
		t.Fatalf("only_add: %d %s", r.Status, r.Body)
	}
	ulExpectJSON(t, "bob only_add", p.Do(t, http.MethodPut, "/user/entities/only_add/"+id, bob, map[string]any{"addresses": map[string][]string{"evm": {second}}}),
		404, `{"error":"no user entity \"`+id+`\""}`)
	ulExpectJSON(t, "bob DELETE entity", p.Do(t, http.MethodDelete, "/user/entities/"+id, bob, nil), 404, `{"error":"no user entity \"`+id+`\""}`)
	ulExpectJSON(t, "alice DELETE entity", p.Do(t, http.MethodDelete, "/user/entities/"+id, alice, nil), 200, `{"deleted":1}`)

	// Additions to an operator entity count for their owner in /transfers until the owner
	// removes them (DELETE on the slug); bob has none to remove.
	slug := "e2e-op-" + randHex(4)
	ulExpectJSON(t, "alice only_add operator", p.Do(t, http.MethodPut, "/user/entities/only_add/"+slug, alice, map[string]any{"addresses": map[string][]string{"evm": {upper}}}),
		200, `{"id":"`+slug+`","addresses":{"evm":["`+wallet+`"]}}`)
	ulEventually(t, 30*time.Second, 1100*time.Millisecond, func() error {
		to, err := ulTransferTo(t, p, alice, slug)
		if err == nil && to.Address != wallet {
			err = fmt.Errorf("alice's transfer of %s is to %s", slug, to.Address)
		}
		return err
	})
	ulExpectJSON(t, "bob DELETE additions", p.Do(t, http.MethodDelete, "/user/entities/"+slug, bob, nil), 404, `{"error":"no user entity \"`+slug+`\""}`)
	ulExpectJSON(t, "alice DELETE additions", p.Do(t, http.MethodDelete, "/user/entities/"+slug, alice, nil), 200, `{"deleted":1}`)
	ulExpectJSON(t, "alice DELETE additions again", p.Do(t, http.MethodDelete, "/user/entities/"+slug, alice, nil), 404, `{"error":"no user entity \"`+slug+`\""}`)
	time.Sleep(1100 * time.Millisecond) // /transfers is heavy: one request a second per key
	ulExpectJSON(t, "alice /transfers of the slug without additions", p.Do(t, http.MethodGet, "/transfers?base="+slug, alice, nil),
		404, `{"error":"base: unknown entity \"`+slug+`\""}`)

	// Limits hold through the edge.
	r = p.Do(t, http.MethodPost, "/user/labels", alice, []map[string]string{{"name": strings.Repeat("n", 257), "note": "", "address": wallet, "chainType": "evm"}})
	ulExpectJSON(t, "name of 257", r, 400, `{"error":"labels[0].name: at most 256 characters (got 257)"}`)
	r = p.Do(t, http.MethodPost, "/user/labels", alice, []map[string]string{{"name": "n", "note": strings.Repeat("x", 1<<20), "address": wallet, "chainType": "evm"}})
	if r.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("body over 1 MiB: %d %s", r.Status, r.Body)
	}

	// A base64 TON address holding "/" is addressed with the slash escaped, through the edge.
	ton := ulTONWithSlash(t)
	tonLabel := `{"name":"ton","note":"","address":"` + ton + `","chainType":"ton"}`
	ulExpectJSON(t, "POST TON label", p.Do(t, http.MethodPost, "/user/labels", alice, []map[string]string{{"name": "ton", "note": "", "address": ton, "chainType": "ton"}}), 200, "["+tonLabel+"]")
	ulExpectJSON(t, "PUT TON label", p.Do(t, http.MethodPut, "/user/labels/"+url.PathEscape(ton+":ton"), alice, map[string]string{"name": "ton2", "note": ""}), 200,
		strings.Replace(tonLabel, `"ton","note"`, `"ton2","note"`, 1))
	ulExpectJSON(t, "DELETE TON label", p.Do(t, http.MethodDelete, "/user/labels/"+url.PathEscape(ton+":ton"), alice, nil), 200, `{"deleted":1}`)

	// Deleting the label removes it from the other services' answers.
	ulExpectJSON(t, "DELETE ?labels", p.Do(t, http.MethodDelete, "/user/labels?labels="+wallet+":evm", alice, nil), 200, `{"deleted":1}`)
	ulExpectJSON(t, "alice GET /user/labels after delete", p.Do(t, http.MethodGet, "/user/labels", alice, nil), 200, `[]`)
	ulEventually(t, 30*time.Second, 200*time.Millisecond, func() error {
		name, err := ulUserLabel(t, p, alice, wallet)
		if err == nil && name != "" {
			err = fmt.Errorf("alice's deleted label still shows: %q", name)
		}
		return err
	})
}

// ulTONWithSlash returns a valid user-friendly TON address in standard base64 holding "/" (and
// no "+"): tag 0x11, workchain 0, a 32-byte account id, CRC16-XMODEM.
func ulTONWithSlash(t *testing.T) string {
	t.Helper()
	for i := 0; i < 1<<16; i++ {
		var b [36]byte
		b[0], b[2], b[3], b[4] = 0x11, byte(i>>8), byte(i), 0xfe
		var crc uint16
		for _, c := range b[:34] {
			crc ^= uint16(c) << 8
			for range 8 {
				if crc&0x8000 != 0 {
					crc = crc<<1 ^ 0x1021
				} else {
					crc <<= 1
				}
			}
		}
		b[34], b[35] = byte(crc>>8), byte(crc)
		if s := base64.StdEncoding.EncodeToString(b[:]); strings.Contains(s, "/") && !strings.Contains(s, "+") {
			return s
		}
	}
	t.Fatal("no TON address with a slash")
	return ""
}
