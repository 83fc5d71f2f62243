package render

import (
	"encoding/json"
	"testing"
)

// A token no pricing id names (a node's own token, not in the registry) has tokenId null, as the
// contract's required, nullable field; a named one its id.
func TestTransferTokenIDNullWhenUnknown(t *testing.T) {
	for _, c := range []struct {
		id   NullString
		want string
	}{{"", `null`}, {"usd-coin", `"usd-coin"`}} {
		b, err := json.Marshal(Transfer{TokenID: c.id})
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if string(got["tokenId"]) != c.want {
			t.Errorf("tokenId %q: rendered %s, want %s", c.id, got["tokenId"], c.want)
		}
	}
}
