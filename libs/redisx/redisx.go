// Package redisx builds the Redis client services use for rate limits, caches, stream sessions
// and replay buffers, and an embedded Redis-protocol server for the local stack.
package redisx

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Option configures Connect.
type Option func(*options)

type options struct{ log *slog.Logger }

// WithLogger makes go-redis's own messages (dial failures during an outage, pool and pub/sub
// notices) JSON lines of log instead of plain text on stderr.
func WithLogger(log *slog.Logger) Option { return func(o *options) { o.log = log } }

// goRedisLogger is set at most once: go-redis holds one logger per process (its package-level
// redis.SetLogger is the only way to give it one), so the first client built with a logger
// decides for every client of the process (the local stack runs every service in one process).
var goRedisLogger sync.Once

// slogPrintf adapts an slog.Logger to go-redis's Printf-style logger.
type slogPrintf struct{ log *slog.Logger }

func (l slogPrintf) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis client", "detail", strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// Connect parses url (redis://[:password@]host:port/db) and checks the server answers.
func Connect(ctx context.Context, url string, opts ...Option) (*redis.Client, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	if o.log != nil {
		goRedisLogger.Do(func() { redis.SetLogger(slogPrintf{o.log}) })
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis URL is not valid: %w", err)
	}
	opt.PoolSize = 64
	opt.MinIdleConns = 4
	opt.DialTimeout = 2 * time.Second
	opt.ReadTimeout = time.Second
	opt.WriteTimeout = time.Second
	c := redis.NewClient(opt)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redis is not reachable at %s (%v); start it or set REDIS_URL", opt.Addr, err)
	}
	return c, nil
}

// Embedded is an in-process Redis-protocol server for the local stack. It keeps nothing on disk.
// miniredis does not expire keys on its own, so a ticker advances its TTL clock in real time.
type Embedded struct {
	srv  *miniredis.Miniredis
	stop chan struct{}
}

// StartEmbedded starts a server on a free loopback port.
func StartEmbedded() (*Embedded, error) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("embedded redis: %w", err)
	}
	e := &Embedded{srv: m, stop: make(chan struct{})}
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-e.stop:
				return
			case <-t.C:
				m.FastForward(250 * time.Millisecond)
			}
		}
	}()
	return e, nil
}

// URL is the server's redis:// URL.
func (e *Embedded) URL() string { return "redis://" + e.srv.Addr() + "/0" }

// Close stops the server.
func (e *Embedded) Close() {
	close(e.stop)
	e.srv.Close()
}
