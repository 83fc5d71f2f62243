package ws

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// Buffer sizes of a hijacked connection. net/http hands a hijacked connection a 4 KiB reader
// and a 4 KiB writer that coder/websocket keeps for the connection's life; a stream client
// sends a few small messages and the writer batches through corkConn, so small buffers do
// (bufio reads and writes past them directly), and an idle connection holds 1 KiB, not 8.
const (
	hijackReadBuf  = 512
	hijackWriteBuf = 512
	// corkMax ends a batch of messages once this much is waiting to be written.
	corkMax = 32 << 10
)

var corkPool = sync.Pool{New: func() any { b := make([]byte, 0, corkMax+4<<10); return &b }}

// corkConn lets the writer send a batch of WebSocket messages with one write: coder/websocket
// flushes every message, and while corked those flushes land in a buffer that uncork writes at
// once. Uncorked (control frames outside a batch, the handshake, close) it writes through.
type corkConn struct {
	net.Conn
	mu      sync.Mutex
	corked  bool
	buf     *[]byte // from corkPool while corked; an idle connection holds none
	timeout time.Duration
}

func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked {
		*c.buf = append(*c.buf, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

func (c *corkConn) cork() {
	c.mu.Lock()
	c.corked = true
	c.buf = corkPool.Get().(*[]byte)
	c.mu.Unlock()
}

// isCorked reports whether writes land in the batch.
func (c *corkConn) isCorked() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.corked
}

// buffered is how much the batch holds.
func (c *corkConn) buffered() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buf == nil {
		return 0
	}
	return len(*c.buf)
}

// uncork writes the batch in one write (within the write timeout) and writes through again;
// written is how much of the batch reached the socket, all of it unless err.
func (c *corkConn) uncork() (written int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	b := c.buf
	c.buf = nil
	if b == nil {
		return 0, nil
	}
	defer func() { *b = (*b)[:0]; corkPool.Put(b) }()
	if len(*b) == 0 {
		return 0, nil
	}
	if c.timeout > 0 {
		_ = c.Conn.SetWriteDeadline(time.Now().Add(c.timeout))
		// The deadline is the batch's alone: left set, it would fail the next write through
		// (a ping, a close) once it passed, and that failure would end the connection.
		defer func() { _ = c.Conn.SetWriteDeadline(time.Time{}) }()
	}
	return c.Conn.Write(*b)
}

// corkWriter is the ResponseWriter websocket.Accept upgrades: its Hijack hands coder/websocket
// the corkConn and small buffers.
type corkWriter struct {
	http.ResponseWriter
	timeout time.Duration
	cc      *corkConn
}

// WriteHeaderNow passes gin's explicit header write through (coder/websocket calls it).
func (w *corkWriter) WriteHeaderNow() {
	if g, ok := w.ResponseWriter.(interface{ WriteHeaderNow() }); ok {
		g.WriteHeaderNow()
	}
}

func (w *corkWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the response writer cannot be hijacked")
	}
	nc, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.cc = &corkConn{Conn: nc, timeout: w.timeout}
	r := brw.Reader
	if r.Buffered() == 0 {
		// Nothing was read ahead: the server's 4 KiB reader is let go for a small one.
		r = bufio.NewReaderSize(nc, hijackReadBuf)
	}
	return w.cc, bufio.NewReadWriter(r, bufio.NewWriterSize(w.cc, hijackWriteBuf)), nil
}
