package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// MaxResponseBytes bounds one API response.
const MaxResponseBytes = 32 << 20

// ClientOptions configure a CoinGecko-compatible API client.
type ClientOptions struct {
	BaseURL           string // ".../api/v3"
	APIKey, KeyHeader string
	RequestsPerMinute float64
	// MaxAttempts is how many times one request is tried (429, 5xx, network errors) before
	// it fails; default 8. MinBackoff and MaxBackoff bound the wait between attempts (defaults
	// 1s and 2m); a Retry-After header is obeyed up to MaxBackoff.
	MaxAttempts            int
	MinBackoff, MaxBackoff time.Duration
	HTTP                   *http.Client
	Logger                 *slog.Logger
	// Throttled, if set, is told of every 429 answer (each is retried).
	Throttled func(ctx context.Context)
}

// Client calls a CoinGecko-compatible API within its rate limit. It is safe for concurrent use.
type Client struct {
	o   ClientOptions
	lim *rate.Limiter
}

// NewClient returns a client.
func NewClient(o ClientOptions) *Client {
	if o.RequestsPerMinute <= 0 {
		o.RequestsPerMinute = 30
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 8
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 2 * time.Minute
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	return &Client{o: o, lim: rate.NewLimiter(rate.Limit(o.RequestsPerMinute/60), 1)}
}

// errPermanent is an answer a retry will not change (a 4xx other than 429).
var errPermanent = errors.New("request refused")

// get fetches path into out, retrying 429s, 5xx and network errors with exponential backoff.
func (c *Client) get(ctx context.Context, path string, q url.Values, out any) error {
	backoff := c.o.MinBackoff
	var last error
	for attempt := 1; attempt <= c.o.MaxAttempts; attempt++ {
		if err := c.lim.Wait(ctx); err != nil {
			return err
		}
		wait, err := c.once(ctx, path, q, out)
		if err == nil {
			return nil
		}
		if errors.Is(err, errPermanent) || ctx.Err() != nil {
			return err
		}
		last = err
		if wait <= 0 {
			wait = backoff
			backoff = min(backoff*2, c.o.MaxBackoff)
		}
		c.o.Logger.WarnContext(ctx, "price API request failed; retrying", "path", path, "attempt", attempt, "error", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(wait, c.o.MaxBackoff)):
		}
	}
	return fmt.Errorf("price API %s: %d attempts: %w", path, c.o.MaxAttempts, last)
}

// once makes one request; on a 429 it returns the Retry-After wait.
func (c *Client) once(ctx context.Context, path string, q url.Values, out any) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.o.BaseURL+path+"?"+q.Encode(), nil)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errPermanent, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.o.APIKey != "" {
		req.Header.Set(c.o.KeyHeader, c.o.APIKey)
	}
	resp, err := c.o.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, MaxResponseBytes)
	switch {
	case resp.StatusCode == http.StatusOK:
		if err := json.NewDecoder(body).Decode(out); err != nil {
			return 0, fmt.Errorf("decode %s: %w", path, err)
		}
		return 0, nil
	case resp.StatusCode == http.StatusTooManyRequests:
		_, _ = io.Copy(io.Discard, body)
		if c.o.Throttled != nil {
			c.o.Throttled(ctx)
		}
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return time.Duration(secs) * time.Second, errors.New("429 too many requests")
	case resp.StatusCode >= 500:
		_, _ = io.Copy(io.Discard, body)
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	default:
		msg, _ := io.ReadAll(io.LimitReader(body, 512))
		return 0, fmt.Errorf("%w: status %d: %s", errPermanent, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
}

// Market is a /coins/markets row.
type Market struct {
	ID                string   `json:"id"`
	Symbol            string   `json:"symbol"`
	Name              string   `json:"name"`
	CurrentPrice      *float64 `json:"current_price"`
	MarketCap         *float64 `json:"market_cap"`
	TotalVolume       *float64 `json:"total_volume"`
	CirculatingSupply *float64 `json:"circulating_supply"`
	TotalSupply       *float64 `json:"total_supply"`
	ATH               *float64 `json:"ath"`
	ATL               *float64 `json:"atl"`
	LastUpdated       string   `json:"last_updated"`
}

// MaxMarketIDs is the most ids one /coins/markets page answers.
const MaxMarketIDs = 250

// Markets returns the market rows of ids (at most MaxMarketIDs).
func (c *Client) Markets(ctx context.Context, ids []string) ([]Market, error) {
	q := url.Values{"vs_currency": {"usd"}, "ids": {strings.Join(ids, ",")}, "per_page": {strconv.Itoa(MaxMarketIDs)}, "page": {"1"}}
	var out []Market
	if err := c.get(ctx, "/coins/markets", q, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// CategoryIDs returns the pricing ids of a CoinGecko category (such as "wrapped-tokens"): the
// /coins/markets page of its MaxMarketIDs largest coins by market cap.
func (c *Client) CategoryIDs(ctx context.Context, category string) ([]string, error) {
	q := url.Values{"vs_currency": {"usd"}, "category": {category}, "order": {"market_cap_desc"},
		"per_page": {strconv.Itoa(MaxMarketIDs)}, "page": {"1"}}
	var out []Market
	if err := c.get(ctx, "/coins/markets", q, &out); err != nil {
		return nil, err
	}
	ids := make([]string, len(out))
	for i, m := range out {
		ids[i] = m.ID
	}
	return ids, nil
}

// Chart is a /coins/{id}/market_chart/range answer: [ms, value] pairs.
type Chart struct {
	Prices       [][2]float64 `json:"prices"`
	MarketCaps   [][2]float64 `json:"market_caps"`
	TotalVolumes [][2]float64 `json:"total_volumes"`
}

// Range returns id's chart over [from, to] (the API gives hourly points for ranges from 1 to
// 90 days).
func (c *Client) Range(ctx context.Context, id string, from, to time.Time) (Chart, error) {
	q := url.Values{"vs_currency": {"usd"}, "from": {strconv.FormatInt(from.Unix(), 10)}, "to": {strconv.FormatInt(to.Unix(), 10)}}
	var out Chart
	err := c.get(ctx, "/coins/"+url.PathEscape(id)+"/market_chart/range", q, &out)
	return out, err
}
