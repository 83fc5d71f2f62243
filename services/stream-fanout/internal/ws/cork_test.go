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
	// A TCP connection: the kernel takes the small writes at once, whatever the scheduler does.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if s, err := ln.Accept(); err == nil {
			_, _ = io.Copy(io.Discard, s)
			s.Close()
		}
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cc := &corkConn{Conn: a, timeout: 50 * time.Millisecond}
	cc.cork()
	if _, err := cc.Write([]byte("batched")); err != nil {
		t.Fatal(err)
	}
	if n, err := cc.uncork(); err != nil || n != len("batched") {
		t.Fatalf("uncork wrote %d: %v", n, err)
	}
	time.Sleep(100 * time.Millisecond) // past the batch's deadline
	if _, err := cc.Write([]byte("ping")); err != nil {
		t.Fatalf("a write through after a batch failed: %v", err)
	}
}
