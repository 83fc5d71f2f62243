package ratelimit

// Settled reports whether no refill of l's leases is on its way: none asked for (fetching is
// set before the refill's goroutine starts) and none still counted as moving (cleared once its
// tokens are in the lease and held). Unspent is then exact for a limiter nobody asks.
func (l *Limiter) Settled() bool {
	if l.moving.Load() != 0 {
		return false
	}
	for _, b := range l.leases.Values() {
		b.mu.Lock()
		fetching := b.fetching
		b.mu.Unlock()
		if fetching {
			return false
		}
	}
	return true
}
