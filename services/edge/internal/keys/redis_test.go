package keys_test

import (
	"net"
	"testing"

	"github.com/chainintel/chainintel/services/edge/internal/keys"
	"github.com/redis/go-redis/v9"
)

// deadRedis is a client pointed at a port nobody listens on.
func deadRedis(t *testing.T) *redis.Client {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func hashBytes(raw string) []byte {
	h := keys.Hash(raw)
	return h[:]
}
