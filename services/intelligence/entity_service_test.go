package intelligence

import (
	"context"
	"strings"
	"testing"

	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
)

// An entity the operator ties to a service renders "service": true, the public shape's nullable
// boolean, never the service's id (a string where clients parse a boolean); one of no service
// renders null.
func TestEntityServiceIsNullableBoolean(t *testing.T) {
	resetDB(t)
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.Brokers = kafkatest.Broker(t, eventsv1.TopicAttributions)
	doc := `{"entities":[{"id":"acme-exchange","name":"Acme Exchange","type":"cex"},
			{"id":"acme-pay","name":"Acme Pay","type":"payments","service":"acme-exchange"}],
		"addresses":[{"chainType":"evm","address":"` + hot1 + `","entity":"acme-pay","label":"Payouts","confidence":0.9}]}`
	if rep, err := ImportCurated(ctx, cfg, strings.NewReader(doc)); err != nil || rep.Entities != 2 {
		t.Fatalf("import: %+v, %v", rep, err)
	}
	api := newTestAPI(t, nil, nil)
	pay := `{"id":"acme-pay","name":"Acme Pay","note":"","type":"payments","service":true}`
	for _, c := range []struct{ path, want string }{
		{"/intelligence/address/" + hot1, `{"address":"` + hot1 + `","chain":"ethereum","serviceEntity":` + pay + `,
			"serviceLabel":{"name":"Payouts","address":"` + hot1 + `","chainType":"evm"},"contract":false,"isUserAddress":false}`},
		{"/intelligence/entity/acme-pay", strings.TrimSuffix(pay, "}") + `,"populatedTags":[]}`},
		{"/intelligence/entity/acme-exchange", `{"id":"acme-exchange","name":"Acme Exchange","note":"","type":"cex","service":null,"populatedTags":[]}`},
	} {
		code, body := api.do(t, "GET", c.path, "", nil)
		if code != 200 {
			t.Fatalf("%s: %d %s", c.path, code, body)
		}
		assertJSON(t, c.path, body, c.want)
	}
}
