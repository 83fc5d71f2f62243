package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"golang.org/x/net/http/httpguts"
)

// Streams bounds what a proxied WebSocket stream holds between the service and the client. A
// service charging per message it writes (stream-fanout charges per transfer) counts a message
// as delivered once its socket took it; every buffer behind that socket, the edge's among them,
// holds messages charged and not read. With the kernel's autotuned buffers a client that stops
// reading is charged for megabytes it never receives before the service's own queue notices;
// bounded, the service's writer blocks soon after the client stops, and the deliveries wait
// in its queue, uncharged, until the client reads or is dropped as slow.
type Streams struct {
	// SocketBuffer (bytes; 0 for the system's default) is the kernel send buffer (SO_SNDBUF)
	// of the client's socket of an upgraded request and the receive buffer (SO_RCVBUF) of the
	// edge's connection to the service for it.
	SocketBuffer int
	// CopyBuffer (bytes; 0 for the reverse proxy's 32 KiB) is the buffer each direction of an
	// upgraded connection is copied through.
	CopyBuffer int
	// CloseGrace (0 for DefaultCloseGrace) is how long the client may still send, for its
	// part of the close handshake, after the service ended the stream.
	CloseGrace time.Duration
}

// DefaultCloseGrace is Streams.CloseGrace's default: ample for a client to answer a close
// frame, short enough that a client holding a stream the service ended does not hold the
// edge's handler, goroutines and sockets.
const DefaultCloseGrace = 5 * time.Second

func (s Streams) closeGrace() time.Duration {
	if s.CloseGrace > 0 {
		return s.CloseGrace
	}
	return DefaultCloseGrace
}

func (s Streams) on() bool { return s.SocketBuffer > 0 || s.CopyBuffer > 0 }

// upgradeTransport is the transport of upgrade requests when s bounds streams: its connections
// have the small receive buffer (set as they are dialled, before any data reaches them); a
// connection an upgrade refused goes back to its pool, for upgrades only.
func (s Streams) upgradeTransport() *http.Transport {
	t := httpx.NewTransport()
	if s.SocketBuffer <= 0 {
		return t
	}
	dial := t.DialContext
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err == nil {
			if b, ok := c.(interface{ SetReadBuffer(int) error }); ok {
				_ = b.SetReadBuffer(s.SocketBuffer)
			}
		}
		return c, err
	}
	return t
}

// byUpgrade sends upgrade requests through upgrade and every other through rt.
type byUpgrade struct{ rt, upgrade http.RoundTripper }

func (b byUpgrade) RoundTrip(r *http.Request) (*http.Response, error) {
	if IsUpgrade(r.Header) {
		return b.upgrade.RoundTrip(r)
	}
	return b.rt.RoundTrip(r)
}

// streamWriter is the ResponseWriter an upgrade is proxied through: the connection its Hijack
// hands the reverse proxy has the small send buffer and copies through bounded buffers.
type streamWriter struct {
	http.ResponseWriter
	s Streams
}

func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *streamWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return c, brw, err
	}
	if w.s.SocketBuffer > 0 {
		if b, ok := c.(interface{ SetWriteBuffer(int) error }); ok {
			_ = b.SetWriteBuffer(w.s.SocketBuffer)
		}
	}
	size := w.s.CopyBuffer
	if size <= 0 {
		size = 32 << 10 // the reverse proxy's own
	}
	return &streamConn{Conn: c, size: size, grace: w.s.closeGrace()}, brw, nil
}

// copyBuffers recycles the copy buffers of upgraded connections, by size.
var copyBuffers sync.Map // int → *sync.Pool of *[]byte

func copyBuffer(size int) (*[]byte, *sync.Pool) {
	p, _ := copyBuffers.LoadOrStore(size, &sync.Pool{New: func() any { b := make([]byte, size); return &b }})
	pool := p.(*sync.Pool)
	return pool.Get().(*[]byte), pool
}

// streamConn is the client's side of an upgraded connection. The reverse proxy copies each
// direction with io.Copy, which uses the destination's ReadFrom or the source's WriteTo when
// it has one: these copy through a buffer of size instead of io.Copy's own.
type streamConn struct {
	net.Conn
	size  int
	grace time.Duration
}

// The plain halves of the connection, so a copy does not find ReadFrom or WriteTo again.
type (
	writerOnly struct{ io.Writer }
	readerOnly struct{ io.Reader }
)

// ReadFrom copies the service's side to the client (io.Copy(client, service)).
func (c *streamConn) ReadFrom(r io.Reader) (int64, error) {
	b, pool := copyBuffer(c.size)
	defer pool.Put(b)
	return io.CopyBuffer(writerOnly{c.Conn}, readerOnly{r}, *b)
}

// WriteTo copies the client's side to the service (io.Copy(service, client)).
func (c *streamConn) WriteTo(w io.Writer) (int64, error) {
	b, pool := copyBuffer(c.size)
	defer pool.Put(b)
	return io.CopyBuffer(writerOnly{w}, readerOnly{c.Conn}, *b)
}

// CloseWrite passes the service's end of stream on to the client, as the reverse proxy does
// with the connection it wraps, and gives the client's side grace to finish: the reverse proxy
// then waits for the client's side to end too, and a client that stays connected without
// sending would otherwise hold the stream's handler, its copies and both sockets for as long
// as it likes (TestStreamEndedByTheServiceIsClosed).
func (c *streamConn) CloseWrite() error {
	_ = c.Conn.SetReadDeadline(time.Now().Add(c.grace))
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// IsUpgrade is whether h asks for a protocol upgrade as the reverse proxy sees one: an Upgrade
// header named in Connection. An Upgrade header alone is an ordinary hop-by-hop header the
// proxy drops.
func IsUpgrade(h http.Header) bool {
	return h.Get("Upgrade") != "" && httpguts.HeaderValuesContainsToken(h["Connection"], "Upgrade")
}
