package ws

import (
	"bufio"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
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

// corkConn lets the writer send a batch of WebSocket messages with one write: while corked, the
// writer's messages (appendText, appendTransfer) and any frame coder/websocket flushes meanwhile
// (a ping, a pong) land in a buffer that uncork writes at once. Uncorked (control frames outside
// a batch, the handshake, close) it writes through.
type corkConn struct {
	net.Conn
	mu      sync.Mutex
	corked  bool
	buf     *[]byte // from corkPool while corked; an idle connection holds none
	timeout time.Duration
	// deadline is the write deadline last set on the socket (unix ns; 0: renew it before the
	// next write). It is renewed before a write that would find less than half the timeout
	// left, not set and cleared around every batch: two deadline changes per batch cost more
	// than the batch's other work. Atomic: interrupt clears it without c.mu, which a blocked
	// write holds.
	deadline atomic.Int64
}

func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked {
		*c.buf = append(*c.buf, p...)
		return len(p), nil
	}
	c.renewDeadline()
	return c.Conn.Write(p)
}

// renewDeadline gives the next socket write at least half the write timeout (c.mu held).
func (c *corkConn) renewDeadline() {
	if c.timeout <= 0 {
		return
	}
	now := time.Now().UnixNano()
	if c.deadline.Load()-now >= int64(c.timeout/2) {
		return
	}
	d := now + int64(c.timeout)
	c.deadline.Store(d)
	_ = c.Conn.SetWriteDeadline(time.Unix(0, d))
}

// interrupt ends the socket write in progress, if any, now, as a write timeout would: a batch
// being written to a client that reads slowly stops at the end of the message it is in
// (finishFrame), so the close frame written after it can be read. The socket's deadline is
// set before the one recorded is cleared: a renewal between the two leaves both fresh, and
// the next write renews after a cleared one, so no later write finds the socket's deadline
// passed while the one recorded says otherwise.
func (c *corkConn) interrupt() {
	_ = c.Conn.SetWriteDeadline(time.Now())
	c.deadline.Store(0)
}

// Pieces of a transfer message around its alertId and Transfer (protocol.go's appendTransfer).
const (
	transferHead = `{"type":"transfer","payload":{"alertId":`
	transferMid  = `,"transfer":`
	transferTail = `}}`
)

// appendFrameHeader appends the header of an unmasked, final text frame of n payload bytes
// (RFC 6455 5.2; a server's frames are not masked).
func appendFrameHeader(b []byte, n int) []byte {
	b = append(b, 0x81)
	switch {
	case n < 126:
		return append(b, byte(n))
	case n <= 0xffff:
		return append(b, 126, byte(n>>8), byte(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 127), uint64(n))
}

// appendText adds one text message to the batch as a whole frame, built here instead of by
// coder/websocket: its per-message locking, context checks and writer reset cost more than
// the frame itself. The writer goroutine is the only one writing data messages, and the
// library's own frames (pings, pongs, close) reach Write whole (they fit its buffer and are
// flushed at once), so frames never interleave. false when not corked.
func (c *corkConn) appendText(p []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.corked {
		return false
	}
	*c.buf = append(appendFrameHeader(*c.buf, len(p)), p...)
	return true
}

// appendTransfer adds a transfer message for the quoted alertId, with the Transfer JSON shared
// by every client it goes to copied once, straight into the batch. false when not corked.
func (c *corkConn) appendTransfer(alertQuoted, transfer []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.corked {
		return false
	}
	n := len(transferHead) + len(alertQuoted) + len(transferMid) + len(transfer) + len(transferTail)
	b := appendFrameHeader(*c.buf, n)
	b = append(b, transferHead...)
	b = append(b, alertQuoted...)
	b = append(b, transferMid...)
	b = append(b, transfer...)
	*c.buf = append(b, transferTail...)
	return true
}

func (c *corkConn) cork() {
	c.mu.Lock()
	c.corked = true
	c.buf = corkPool.Get().(*[]byte)
	c.mu.Unlock()
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
	// The deadline left set is renewed before any later write (a ping, a close), so it never
	// fails a write it was not meant for.
	c.renewDeadline()
	written, err = c.Conn.Write(*b)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		written = c.finishFrame(*b, written)
	}
	return written, err
}

// finishFrame writes the rest of the frame a timed-out (or interrupted) write of batch b
// stopped in, after written bytes, within a fresh write timeout (c.mu held); it returns how
// much of b is written. The connection is closed as slow after a timeout: a frame cut short
// would make the close frame that tells the client so unreadable, and a client reading again
// gets a whole message and then the reason. A client still not reading fails this write too.
// An interrupt landing meanwhile does not shorten the timeout: the write goes on until it.
func (c *corkConn) finishFrame(b []byte, written int) int {
	end := frameEnd(b, written)
	until := time.Now().Add(c.timeout)
	for written < end && time.Now().Before(until) {
		c.deadline.Store(until.UnixNano())
		_ = c.Conn.SetWriteDeadline(until)
		n, err := c.Conn.Write(b[written:end])
		written += n
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
	}
	return written
}

// frameEnd is where the frame of b holding byte pos ends (b is whole unmasked server frames,
// as the writer and coder/websocket build them; pos itself when it starts a frame or b does
// not parse).
func frameEnd(b []byte, pos int) int {
	for at := 0; at < len(b); {
		if at >= pos {
			return pos
		}
		if len(b)-at < 2 {
			return pos
		}
		n, h := int(b[at+1]&0x7f), 2
		switch n {
		case 126:
			if len(b)-at < 4 {
				return pos
			}
			n, h = int(binary.BigEndian.Uint16(b[at+2:])), 4
		case 127:
			if len(b)-at < 10 {
				return pos
			}
			n, h = int(binary.BigEndian.Uint64(b[at+2:])), 10
		}
		next := at + h + n
		if next > pos {
			return min(next, len(b))
		}
		at = next
	}
	return pos
}

// corkWriter is the ResponseWriter websocket.Accept upgrades: its Hijack hands coder/websocket
// the corkConn and small buffers.
type corkWriter struct {
	http.ResponseWriter
	timeout time.Duration
	// sendBuffer, when positive, is set as the socket's SO_SNDBUF (Options.SendBuffer).
	sendBuffer int
	cc         *corkConn
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
	if w.sendBuffer > 0 {
		setSendBuffer(nc, w.sendBuffer)
	}
	w.cc = &corkConn{Conn: nc, timeout: w.timeout}
	r := brw.Reader
	if r.Buffered() == 0 {
		// Nothing was read ahead: the server's 4 KiB reader is let go for a small one.
		r = bufio.NewReaderSize(nc, hijackReadBuf)
	}
	return w.cc, bufio.NewReadWriter(r, bufio.NewWriterSize(w.cc, hijackWriteBuf)), nil
}

// setSendBuffer sets the socket's kernel send buffer (SO_SNDBUF; Linux doubles it for its
// bookkeeping and stops growing it by itself). A write blocks once the client has not read
// what that buffer and its own receive buffer hold, so the writer stops there: the deliveries
// behind it wait in the connection's queue, neither charged nor written, and a client that
// stopped reading overflows the queue instead of the kernel's megabytes of autotuned buffers.
// A socket that is not TCP (a test's pipe) is left as it is.
func setSendBuffer(nc net.Conn, n int) {
	if s, ok := nc.(interface{ SetWriteBuffer(int) error }); ok {
		_ = s.SetWriteBuffer(n)
	}
}
