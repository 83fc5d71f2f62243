package ws

import "time"

// writerPool runs connections' writers. A writer runs only while its connection has something
// to send, which at a few deliveries a second per client means one start per delivery: a
// goroutine made and let go each time, its stack grown again each time to the depth a batch
// needs. The pool hands a connection to a writer goroutine that has just finished another's
// batch, and starts one only when none is waiting; a goroutine left without work for idle
// ends, so an idle replica keeps none.
type writerPool struct {
	work chan *conn // unbuffered: a send succeeds only when a writer is waiting for work
	idle time.Duration
}

func newWriterPool(idle time.Duration) *writerPool {
	return &writerPool{work: make(chan *conn), idle: idle}
}

// run has c's queue drained by a waiting writer, or a new one.
func (p *writerPool) run(c *conn) {
	select {
	case p.work <- c:
	default:
		go p.writer(c)
	}
}

// writer drains c, then the connections handed to it, until none comes for p.idle.
func (p *writerPool) writer(c *conn) {
	t := time.NewTimer(p.idle)
	defer t.Stop()
	for {
		c.drain()
		t.Reset(p.idle)
		select {
		case c = <-p.work:
		case <-t.C:
			return
		}
	}
}
