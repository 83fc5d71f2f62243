package http

import (
	"strings"
	"testing"
)

// Subaccounts by entity resolve the entities named in one read of the operator entities and at
// most one user-labels call per kind (the caller's user entities, the caller's additions), not
// a call per entity; an unknown operator entity is a 404 before user-labels is asked.
func TestSubaccountsEntitiesOneCallPerKind(t *testing.T) {
	base := newEnv(t)
	sub := fill(`[{"address":"@SOLSUB","ownerAddress":"@SOLOWN","id":"solana","name":"Solana","symbol":"SOL","balance":5,
		"balanceExact":"5000000000","price":100,"usd":500}]`)
	for _, tc := range []struct {
		path   string
		status int
		want   string
		calls  int
	}{
		{"/balances/solana/subaccounts/entity/binance," + userEnt + "," + strings.ToUpper(userEnt) + "?pricingID=solana", 200, sub, 2},
		{"/balances/solana/subaccounts/entity/" + userEnt + "," + strings.ToUpper(userEnt) + "?pricingID=solana", 200, `[]`, 1},
		{"/balances/solana/subaccounts/entity/binance?pricingID=solana", 200, sub, 1},
		{"/balances/solana/subaccounts/entity/" + userEnt + ",binance,nope,nope2?pricingID=solana", 404, `{"error":"entity \"nope\" not found"}`, 0},
		{"/balances/solana/subaccounts/entity/binance,8f0e2c55-1111-4222-8333-944455556666," + userEnt + "?pricingID=solana", 404,
			`{"error":"entity \"8f0e2c55-1111-4222-8333-944455556666\" not found"}`, 2},
	} {
		var calls int
		ev := base.as(t, fakeLabels{calls: &calls})
		ev.expect(t, tc.path, tc.status, tc.want)
		if calls != tc.calls {
			t.Fatalf("%s: %d user-labels calls, want %d", tc.path, calls, tc.calls)
		}
	}
}
