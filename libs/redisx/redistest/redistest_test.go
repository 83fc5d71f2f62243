package redistest

import (
	"context"
	"testing"
)

func TestClientsAreIsolated(t *testing.T) {
	a, _ := Client(t)
	b, _ := Client(t)
	ctx := context.Background()
	if err := a.Set(ctx, "k", "a", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.Exists(ctx, "k").Result(); n != 0 {
		t.Fatal("databases are shared")
	}
}
