package sharedtest

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// FreePort returns a loopback TCP port free now, for a process the test starts that must be told
// its port (geth, redis-server) or a listener it closes and opens again at the same address.
// The port is drawn below the kernel's ephemeral range (ip_local_port_range), not asked of the
// kernel with :0: a port the kernel handed out is one it hands out again to any outgoing
// connection on the machine between the test's release of it and the process's bind, so
// parallel test runs would steal it now and then.
func FreePort(t testing.TB) int {
	t.Helper()
	lo, hi := 20000, ephemeralStart()
	if hi-lo < 1000 {
		lo, hi = 10000, 20000
	}
	for range 200 {
		p := lo + rand.IntN(hi-lo)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		_ = ln.Close()
		return p
	}
	t.Fatalf("no free loopback port between %d and %d", lo, hi)
	return 0
}

// ephemeralStart is the first port of the kernel's ephemeral range (32768 where it cannot be
// read).
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
}
