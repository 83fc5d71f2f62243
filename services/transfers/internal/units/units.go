// Package units converts on-chain integer amounts to unit values, for the consumers that write
// rows and the handlers that render them alike.
package units

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Value is amount / 10^decimals as the nearest float64; past float64's range it is
// ±math.MaxFloat64.
func Value(a *big.Int, decimals int32) float64 {
	if a == nil {
		return 0
	}
	s := new(big.Int).Abs(a).String()
	d := int(decimals)
	if d < 0 {
		d = 0
	}
	if len(s) <= d {
		s = strings.Repeat("0", d-len(s)+1) + s
	}
	str := s[:len(s)-d] + "." + s[len(s)-d:]
	f, err := strconv.ParseFloat(str, 64)
	if err != nil || math.IsInf(f, 0) {
		f = math.MaxFloat64
	}
	if a.Sign() < 0 {
		f = -f
	}
	return f
}
