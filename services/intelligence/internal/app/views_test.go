package app

import (
	"encoding/json"
	"testing"
)

// A contract's token that no pricing id names (a node's own token, not in the registry) has id
// null, as a transfer's tokenId and a token identifier's pricingID have.
func TestTokenRefIDNullWhenUnknown(t *testing.T) {
	for _, c := range []struct {
		ref  TokenRef
		want string
	}{
		{TokenRef{Name: "Own", Symbol: "OWN", Decimals: 6}, `{"id":null,"name":"Own","symbol":"OWN","decimals":6}`},
		{TokenRef{ID: "usd-coin", Name: "USD Coin", Symbol: "USDC", Decimals: 6}, `{"id":"usd-coin","name":"USD Coin","symbol":"USDC","decimals":6}`},
	} {
		b, err := json.Marshal(c.ref)
		if err != nil || string(b) != c.want {
			t.Errorf("%+v: %s (%v), want %s", c.ref, b, err, c.want)
		}
	}
}
