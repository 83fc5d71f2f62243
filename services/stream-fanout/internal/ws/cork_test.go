package ws

import (
	"io"
	"net"
	"testing"
	"time"
)

// A batch's write deadline must not outlive the batch: a ping or close written through later,
// after the deadline passed, failed and ended the connection.
func TestCorkDeadlineIsTheBatchsAlone(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() { _, _ = io.Copy(io.Discard, b) }()
	cc := &corkConn{Conn: a, timeout: time.Millisecond}
	cc.cork()
	if _, err := cc.Write([]byte("batched")); err != nil {
		t.Fatal(err)
	}
	if n, err := cc.uncork(); err != nil || n != len("batched") {
		t.Fatalf("uncork wrote %d: %v", n, err)
	}
	time.Sleep(5 * time.Millisecond) // past the batch's deadline
	if _, err := cc.Write([]byte("ping")); err != nil {
		t.Fatalf("a write through after a batch failed: %v", err)
	}
}
