package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"
)

// UpstreamError is a non-2xx answer from another service.
type UpstreamError struct {
	Service string
	Status  int
	Message string
}

func (e *UpstreamError) Error() string {
	return fmt.Sprintf("%s answered %d: %s", e.Service, e.Status, e.Message)
}

// NewTransport returns an HTTP transport tuned for many keep-alive calls to a few internal hosts.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   512,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// InternalClient calls another service's /internal API. It propagates trace context and, when
// the context carries a caller identity, signs it into the request so the callee acts for the
// same caller. It is safe for concurrent use.
type InternalClient struct {
	service string
	base    *url.URL
	hc      *http.Client
	signer  *Signer
}

// NewInternalClient returns a client for the service at baseURL (e.g. "http://user-labels:8080").
func NewInternalClient(service, baseURL string, signer *Signer, tp trace.TracerProvider, timeout time.Duration) (*InternalClient, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("%s URL %q is not an absolute http URL", service, baseURL)
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	var rt http.RoundTripper = NewTransport()
	if tp != nil {
		rt = otelhttp.NewTransport(rt, otelhttp.WithTracerProvider(tp))
	}
	return &InternalClient{service: service, base: u, hc: &http.Client{Transport: rt, Timeout: timeout}, signer: signer}, nil
}

// Do sends method to path with query and an optional JSON body, and decodes a 2xx JSON answer
// into out (when out is not nil). A 4xx answer is an *UpstreamError; a failed call or a 5xx answer
// is an *UnavailableError naming the service (the UpstreamError inside it when it answered).
func (c *InternalClient) Do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode %s request: %w", c.service, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if id, ok := IdentityFrom(ctx); ok && c.signer != nil {
		c.signer.Sign(req.Header, id, time.Now())
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("call %s %s: %w", c.service, path, ctx.Err())
		}
		return Unavailable(c.service, fmt.Errorf("call %s %s: %w", c.service, path, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var eb ErrorBody
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(raw, &eb) != nil || eb.Error == "" {
			eb.Error = http.StatusText(resp.StatusCode)
		}
		ue := &UpstreamError{Service: c.service, Status: resp.StatusCode, Message: eb.Error}
		if resp.StatusCode >= 500 {
			// The callee failed or lost a dependency of its own: to this caller the callee is
			// unavailable, whatever the cause behind it.
			return Unavailable(c.service, ue)
		}
		return ue
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := decodeAnswer(resp.Body, out); err != nil {
		return fmt.Errorf("decode %s %s answer: %w", c.service, path, err)
	}
	return nil
}
