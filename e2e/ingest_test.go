package e2e

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/eventbus"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/ingest"
	"github.com/chainintel/chainintel/sim"
	"google.golang.org/protobuf/proto"
)

// The local stack's ingest simulates by default: its chain topics carry transfers on several
// chains (deposits into exchanges' deposit addresses and sweeps into their hot wallets among
// them), exact balances, and the token registry and prices the simulator stands in for.
func TestIngestSimulatorFeedsTheTopics(t *testing.T) {
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
	role := map[string]sim.Address{}
	for _, a := range w.Addresses() {
		role[a.Chain+"/"+a.Address] = a
	}

	var mu sync.Mutex
	chainsSeen := map[string]int{}
	var deposits, sweeps, balances, registry, prices int
	var bad []string
	amount := regexp.MustCompile(`^(0|[1-9][0-9]*)$`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	group := "e2e-ingest-" + randHex(4)
	consume := func(r interface{ Run(context.Context) error }) {
		go func() { _ = r.Run(ctx) }()
	}
	opts := func(topic string) eventbus.ConsumerOptions {
		return eventbus.ConsumerOptions{Brokers: p.Brokers, Security: p.KafkaSecurity, Group: group + "." + topic, Topic: topic, MaxWait: 20 * time.Millisecond}
	}
	consume(eventbus.NewConsumer(opts(eventsv1.TopicTransfers), func() *eventsv1.Transfer { return new(eventsv1.Transfer) },
		func(_ context.Context, b []eventbus.Message[*eventsv1.Transfer]) error {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range b {
				tr := m.Msg
				chainsSeen[tr.Chain]++
				if !amount.MatchString(tr.Amount) || tr.Id == "" || tr.BlockHash == "" || tr.BlockTimeMs == 0 {
					bad = append(bad, fmt.Sprint(tr))
				}
				from, to := role[tr.Chain+"/"+tr.From], role[tr.Chain+"/"+tr.To]
				if to.Role == sim.RoleDeposit && from.Entity == to.Owner {
					deposits++
				}
				if from.Role == sim.RoleDeposit && to.Role == sim.RoleHotWallet && to.Entity == from.Entity {
					sweeps++
				}
			}
			return nil
		}))
	consume(eventbus.NewConsumer(opts(eventsv1.TopicBalances), func() *eventsv1.BalanceObservation { return new(eventsv1.BalanceObservation) },
		func(_ context.Context, b []eventbus.Message[*eventsv1.BalanceObservation]) error {
			mu.Lock()
			defer mu.Unlock()
			balances += len(b)
			return nil
		}))
	consume(eventbus.NewConsumer(opts(eventsv1.TopicMarketTokens), func() *eventsv1.MarketToken { return new(eventsv1.MarketToken) },
		func(_ context.Context, b []eventbus.Message[*eventsv1.MarketToken]) error {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range b {
				for _, want := range w.MarketTokens() {
					if want.PricingId == m.Msg.PricingId && proto.Equal(want.Deployments[0], m.Msg.Deployments[0]) {
						registry++
					}
				}
			}
			return nil
		}))
	consume(eventbus.NewConsumer(opts(eventsv1.TopicPrices), func() *eventsv1.Price { return new(eventsv1.Price) },
		func(_ context.Context, b []eventbus.Message[*eventsv1.Price]) error {
			mu.Lock()
			defer mu.Unlock()
			prices += len(b)
			return nil
		}))

	Eventually(t, 90*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(bad) > 0 {
			t.Fatalf("malformed transfers: %v", bad[:min(3, len(bad))])
		}
		if len(chainsSeen) < 3 || deposits == 0 || sweeps == 0 || balances == 0 || registry < len(w.MarketTokens())/2 || prices == 0 {
			return fmt.Errorf("so far: transfers per chain %v, %d deposits, %d sweeps, %d balances, %d registry entries, %d prices",
				chainsSeen, deposits, sweeps, balances, registry, prices)
		}
		return nil
	})
}
