package e2e

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTokenVolumeMatchesTransfers checks, through the edge on the simulated world, that a
// token's /token/volume over the last day equals the sum of the USD of its transfers that
// /transfers lists over the same hours, and that the other token routes answer.
func TestTokenVolumeMatchesTransfers(t *testing.T) {
	p := Get(t)
	if p.Stack == nil {
		t.Skip("needs the local stack's simulator")
	}
	const token = "tether"
	Eventually(t, 120*time.Second, func() error {
		var points []struct {
			Time  time.Time `json:"time"`
			InUSD float64   `json:"inUSD"`
		}
		r := p.Get(t, "/token/volume/"+token+"?granularity=1h&timeLast=24h")
		if r.Status != 200 {
			return fmt.Errorf("/token/volume: %v", r)
		}
		r.JSON(t, &points)
		if len(points) < 3 {
			return fmt.Errorf("/token/volume: %d buckets", len(points))
		}
		// The current hour is still being written, and the first bucket counts only the
		// transfers from now - 24h on: compare the whole hours between.
		points = points[1 : len(points)-1]
		from, to := points[0].Time, points[len(points)-1].Time.Add(time.Hour)
		volume := 0.0
		for _, pt := range points {
			volume += pt.InUSD
		}
		time.Sleep(1100 * time.Millisecond) // the heavy class allows one request a second
		sum, n, err := transfersUSD(t, p, token, from, to)
		time.Sleep(1100 * time.Millisecond)
		if err != nil {
			return err
		}
		if n == 0 || volume == 0 {
			return fmt.Errorf("no %s transfers yet (%d listed, volume %v)", token, n, volume)
		}
		if math.Abs(sum-volume) > 1e-6*math.Max(1, sum) {
			return fmt.Errorf("volume %v over [%s, %s), /transfers sums %v over %d transfers", volume, from, to, sum, n)
		}
		return nil
	})
	// The simulated market's tokens rank with the volume their transfers give them: a copy of
	// the rankings taken before the world filled is replaced within two refresh intervals (30 s
	// in the local stack), and one of an empty registry is not kept.
	Eventually(t, 90*time.Second, func() error {
		time.Sleep(1100 * time.Millisecond)
		var top struct {
			Tokens []struct {
				Token struct {
					ID string `json:"id"`
				} `json:"token"`
				Current struct {
					Volume float64 `json:"volume"`
				} `json:"current"`
			} `json:"tokens"`
			Total int `json:"total"`
		}
		r := p.Get(t, "/token/top?timeframe=24h&orderByAgg=volume&size=5")
		if r.Status != 200 {
			return fmt.Errorf("/token/top: %v", r)
		}
		r.JSON(t, &top)
		if top.Total == 0 || len(top.Tokens) == 0 || top.Tokens[0].Current.Volume <= 0 {
			return fmt.Errorf("/token/top: no token with volume yet: %s", r.Body)
		}
		return nil
	})
	for path, status := range map[string]int{
		"/token/top?timeframe=24h&orderByAgg=netflowCex": 200,
		"/token/top_flow/" + token + "?timeLast=24h":     200,
		"/token/trending":           200,
		"/token/trending/ethereum":  200,
		"/marketdata/altcoin_index": 200,
		"/token/top":                400,
		"/token/volume/" + token:    400,
	} {
		Eventually(t, 60*time.Second, func() error {
			time.Sleep(1100 * time.Millisecond)
			if r := p.Get(t, path); r.Status != status {
				return fmt.Errorf("%s: %v, want %d", path, r, status)
			}
			return nil
		})
	}
}

// TestIntelligenceTokenShowsTokenAnalyticsMarket checks that /intelligence/token answers with
// the market data token-analytics owns.
func TestIntelligenceTokenShowsTokenAnalyticsMarket(t *testing.T) {
	p := Get(t)
	if p.Stack == nil {
		t.Skip("needs the local stack's simulator")
	}
	Eventually(t, 90*time.Second, func() error {
		var info struct {
			Identifier struct {
				PricingID string `json:"pricingID"`
			} `json:"identifier"`
			Price       float64 `json:"price"`
			Price24hAgo float64 `json:"price24hAgo"`
			Deployments []struct {
				Chain string `json:"chain"`
			} `json:"deployments"`
		}
		r := p.Get(t, "/intelligence/token/ethereum")
		if r.Status != 200 {
			return fmt.Errorf("/intelligence/token/ethereum: %v", r)
		}
		r.JSON(t, &info)
		var tr struct {
			Price       float64 `json:"price"`
			Price24hAgo float64 `json:"price24hAgo"`
		}
		r2 := p.Get(t, "/token/trending/ethereum")
		if r2.Status != 200 {
			return fmt.Errorf("/token/trending/ethereum: %v", r2)
		}
		r2.JSON(t, &tr)
		if info.Price == 0 || info.Price24hAgo == 0 || len(info.Deployments) == 0 {
			return fmt.Errorf("no market data yet: %s", r.Body)
		}
		if info.Price24hAgo != tr.Price24hAgo {
			return fmt.Errorf("intelligence says 24 h ago %v, token-analytics %v", info.Price24hAgo, tr.Price24hAgo)
		}
		return nil
	})
}

// transfersUSD pages /transfers of a token over [from, to) and sums historicalUSD.
func transfersUSD(t *testing.T, p *Platform, token string, from, to time.Time) (float64, int, error) {
	sum, n := 0.0, 0
	for offset := 0; offset < 10000; offset += 1000 {
		q := url.Values{"tokens": {token}, "timeGte": {strconv.FormatInt(from.UnixMilli(), 10)},
			"timeLte": {strconv.FormatInt(to.UnixMilli()-1, 10)}, "limit": {"1000"}, "offset": {strconv.Itoa(offset)}}
		var page struct {
			Transfers []struct {
				HistoricalUSD float64 `json:"historicalUSD"`
			} `json:"transfers"`
			Count int `json:"count"`
		}
		r := p.Get(t, "/transfers?"+q.Encode())
		if r.Status != 200 {
			return 0, 0, fmt.Errorf("/transfers: %v", r)
		}
		r.JSON(t, &page)
		for _, tr := range page.Transfers {
			sum += tr.HistoricalUSD
		}
		n += len(page.Transfers)
		if len(page.Transfers) < 1000 {
			return sum, n, nil
		}
		time.Sleep(1100 * time.Millisecond) // the heavy class allows one request a second
	}
	return 0, 0, fmt.Errorf("more than 10000 %s transfers in a day", token)
}

// TestExchangeTokensThroughEdge checks /token/service_exchange_tokens through the edge: the
// local stack's configured lists, in their order, each entry priced as /token/trending prices it.
func TestExchangeTokensThroughEdge(t *testing.T) {
	p := Get(t)
	if p.Stack == nil {
		t.Skip("needs the local stack's configured exchange lists")
	}
	type entry struct {
		Identifier struct {
			PricingID string `json:"pricingID"`
		} `json:"identifier"`
		Symbol      string   `json:"symbol"`
		Price       *float64 `json:"price"`
		Deployments []any    `json:"deployments"`
	}
	Eventually(t, 90*time.Second, func() error {
		var got struct {
			Spot []entry `json:"spotTokens"`
			Perp []entry `json:"perpTokens"`
		}
		r := p.Get(t, "/token/service_exchange_tokens")
		if r.Status != 200 {
			return fmt.Errorf("/token/service_exchange_tokens: %v", r)
		}
		r.JSON(t, &got)
		ids := func(es []entry) (out []string) {
			for _, e := range es {
				out = append(out, e.Identifier.PricingID)
			}
			return out
		}
		if s, pp := strings.Join(ids(got.Spot), ","), strings.Join(ids(got.Perp), ","); s != "bitcoin,ethereum,solana,usd-coin" || pp != "bitcoin,ethereum,solana" {
			return fmt.Errorf("spot %s, perp %s", s, pp)
		}
		eth := got.Spot[1]
		if eth.Price == nil || eth.Symbol != "ETH" || len(eth.Deployments) == 0 {
			return fmt.Errorf("ethereum not priced yet: %s", r.Body)
		}
		var tr struct {
			Price float64 `json:"price"`
		}
		r2 := p.Get(t, "/token/trending/ethereum")
		if r2.Status != 200 {
			return fmt.Errorf("/token/trending/ethereum: %v", r2)
		}
		r2.JSON(t, &tr)
		if tr.Price != *eth.Price {
			return fmt.Errorf("exchange tokens price %v, trending %v (a tick apart, asked again)", *eth.Price, tr.Price)
		}
		return nil
	})
}
