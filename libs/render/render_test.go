package render

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"
	"time"
)

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An address the read model knows, with the caller's own label and entity, renders every field
// the API names, in its order; the same address known to nobody renders only what is always
// there.
func TestInfoRendersTheAPIShape(t *testing.T) {
	exch := EntityOf(&StoredEntity{ID: "binance", Name: "Binance", Type: "cex", Website: "https://binance.com"})
	fund := EntityOf(&StoredEntity{ID: "a16z", Name: "a16z", Type: "fund", Service: "a16z-crypto"})
	at := &Attribution{Entity: exch, Label: "Hot Wallet", Predicted: fund, DepositServiceID: "coinbase", Version: 3}
	ai := Info("ethereum", ChainType("ethereum"), "0xab", false, at)
	ai.SetUser("evm", "mine", true, UserEntity("u1", "Me", "note"))
	want := `{"address":"0xab","chain":"ethereum",` +
		`"serviceEntity":{"id":"binance","name":"Binance","note":"","type":"cex","service":null,"website":"https://binance.com"},` +
		`"serviceLabel":{"name":"Hot Wallet","address":"0xab","chainType":"evm"},` +
		`"predictedEntity":{"id":"a16z","name":"a16z","note":"","type":"fund","service":true},` +
		`"userEntity":{"id":"u1","name":"Me","note":"note","type":"user","service":null},` +
		`"userLabel":{"name":"mine","address":"0xab","chainType":"evm"},` +
		`"depositServiceID":"coinbase","contract":false,"isUserAddress":true}`
	if got := encode(t, ai); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}

	bare := Info("tron", ChainType("tron"), "T1", true, nil)
	bare.SetUser("tron", "", false, nil)
	if got, want := encode(t, bare), `{"address":"T1","chain":"tron","contract":true,"isUserAddress":false}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// The read model's contract flag adds to the caller's, never clears it.
	if !Info("ethereum", "evm", "0x1", true, &Attribution{}).Contract || !Info("ethereum", "evm", "0x1", false, &Attribution{IsContract: true}).Contract {
		t.Fatal("contract flag lost")
	}
	if EntityOf(nil) != nil {
		t.Fatal("EntityOf(nil) is not nil")
	}
}

func TestTransferType(t *testing.T) {
	for _, c := range []struct {
		typ   int32
		token string
		want  string
	}{{1, "0xt", "external"}, {2, "", "internal"}, {3, "", "token"}, {0, "0xt", "token"}, {0, "", "external"}, {9, "", "external"}} {
		if got := TransferType(c.typ, c.token); got != c.want {
			t.Errorf("TransferType(%d, %q) = %q, want %q", c.typ, c.token, got, c.want)
		}
	}
}

func TestUnitValue(t *testing.T) {
	huge := new(big.Int).Exp(big.NewInt(10), big.NewInt(400), nil)
	for _, c := range []struct {
		a    *big.Int
		dec  int32
		want float64
	}{
		{nil, 18, 0},
		{big.NewInt(15), 1, 1.5},
		{big.NewInt(-15), 1, -1.5},
		{big.NewInt(1), 18, 1e-18},
		{big.NewInt(7), 0, 7},
		{big.NewInt(7), -2, 7},
		{huge, 0, math.MaxFloat64},
		{new(big.Int).Neg(huge), 0, -math.MaxFloat64},
	} {
		if got := UnitValue(c.a, c.dec); got != c.want {
			t.Errorf("UnitValue(%v, %d) = %v, want %v", c.a, c.dec, got, c.want)
		}
	}
}

func TestTimestamp(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.FixedZone("x", 3600))
	if got, want := Timestamp(at), "2026-01-02T02:04:05.6Z"; got != want {
		t.Fatalf("Timestamp = %q, want %q", got, want)
	}
}
