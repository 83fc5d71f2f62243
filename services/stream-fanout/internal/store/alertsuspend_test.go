package store

import (
	"context"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
)

// A suspension is seen by any reader for its time, and only for its method.
func TestAlertSuspensions(t *testing.T) {
	rdb, _ := redistest.Client(t)
	a, b := NewAlertSuspensions(rdb, "t:"), NewAlertSuspensions(rdb, "t:")
	ctx := context.Background()
	if err := a.Suspend(ctx, 3, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if left, err := b.Suspended(ctx, 3); err != nil || left <= 0 || left > 200*time.Millisecond {
		t.Fatalf("Suspended(3) = %s, %v; want up to 200ms left", left, err)
	}
	if left, err := b.Suspended(ctx, 4); err != nil || left != 0 {
		t.Fatalf("Suspended(4) = %s, %v; want none", left, err)
	}
	time.Sleep(250 * time.Millisecond)
	if left, err := b.Suspended(ctx, 3); err != nil || left != 0 {
		t.Fatalf("Suspended(3) after its time = %s, %v; want none", left, err)
	}
}
