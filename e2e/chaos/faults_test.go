package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/sharedtest"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// redisServer is a redis-server process of the suite's own on a fixed loopback port, so it can
// be stopped and started again at the same address under the platform.
type redisServer struct {
	port int
	cmd  *exec.Cmd
}

func startRedis(t *testing.T) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (Debian package redis-server)")
	}
	r := &redisServer{port: freePort(t)}
	if err := r.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.stop)
	return r
}

func (r *redisServer) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

func (r *redisServer) start() error {
	r.cmd = exec.Command("redis-server", "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--protected-mode", "no")
	r.cmd.Stdout, r.cmd.Stderr = io.Discard, io.Discard
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	return waitDial(fmt.Sprintf("127.0.0.1:%d", r.port))
}

func (r *redisServer) stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}

// proxy forwards TCP connections from a loopback port to target. Cut closes the listener and
// every open connection (the platform sees PostgreSQL vanish); Restore listens again at the
// same address.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]struct{}
	wg           sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	p := &proxy{addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), target: target, conns: map[net.Conn]struct{}{}}
	if err := p.Restore(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Cut(); p.wg.Wait() })
	return p
}

func (p *proxy) Restore() error {
	var ln net.Listener
	var err error
	// The port was ours a moment ago; the kernel may need a moment to release it.
	for i := 0; i < 100; i++ {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("proxy listen %s: %w", p.addr, err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go p.accept(ln)
	return nil
}

func (p *proxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		if p.ln != ln { // cut meanwhile
			p.mu.Unlock()
			_ = c.Close()
			_ = up.Close()
			continue
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Cut makes PostgreSQL unreachable through the proxy: no new connection is accepted and every
// open one is closed.
func (p *proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
}

func freePort(t *testing.T) int { return sharedtest.FreePort(t) }

func waitDial(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return nil
		}
		if ctx.Err() != nil {
			return errors.Join(fmt.Errorf("%s did not come up", addr), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// broker is the platform's embedded Kafka-protocol broker (franz-go's kfake, as dev/stack runs
// it), started by the suite so that it can be taken down: while down is set, it closes every
// client connection on its first request, as a broker that went away would.
type broker struct {
	c    *kfake.Cluster
	down atomic.Bool
}

func startBroker(t *testing.T) *broker {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(4))
	if err != nil {
		t.Fatal(err)
	}
	b := &broker{c: c}
	c.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if b.down.Load() {
			return nil, errors.New("broker down"), true
		}
		return nil, nil, false
	})
	t.Cleanup(c.Close)
	return b
}
