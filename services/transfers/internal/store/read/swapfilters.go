package read

// swapExtras are the conditions of the /swaps filters beyond base, flow, from, to, tokens, time
// and USD: the sender and receiver sets (senders, receivers), the other side of base
// (counterparties), the protocols, and ranges of each token's amount in token units.
func (b *sqlb) swapExtras(f SwapFilter) []string {
	c := b.side("sender", f.Senders)
	c = append(c, b.side("receiver", f.Receivers)...)
	if f.HasCP {
		// One side is base (the arm's driver); the swap is between base and these when either
		// side is one of them.
		c = append(c, "("+b.member("sender", f.Counterparties)+" OR "+b.member("receiver", f.Counterparties)+")")
	}
	if len(f.Protocols) > 0 {
		c = append(c, b.anyOf("protocol", f.Protocols))
	}
	for _, r := range []struct {
		amount, decimals, op string
		v                    *float64
	}{
		{"amount0", "token0_decimals", ">=", f.Value0Gte}, {"amount0", "token0_decimals", "<=", f.Value0Lte},
		{"amount1", "token1_decimals", ">=", f.Value1Gte}, {"amount1", "token1_decimals", "<=", f.Value1Lte},
	} {
		if r.v != nil {
			c = append(c, "("+r.amount+" / power(10::numeric, "+r.decimals+")) "+r.op+" "+b.arg(*r.v)+"::numeric")
		}
	}
	return c
}
