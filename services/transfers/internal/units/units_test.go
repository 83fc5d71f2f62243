package units

import (
	"math"
	"math/big"
	"testing"
)

func TestValue(t *testing.T) {
	huge, _ := new(big.Int).SetString("10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000", 10)
	for _, c := range []struct {
		a    *big.Int
		dec  int32
		want float64
	}{
		{nil, 18, 0},
		{big.NewInt(0), 6, 0},
		{big.NewInt(1_500_000), 6, 1.5},
		{big.NewInt(-1_500_000), 6, -1.5},
		{big.NewInt(7), 0, 7},
		{big.NewInt(7), -3, 7},
		{big.NewInt(5), 3, 0.005},
		{huge, 0, math.MaxFloat64},
		{new(big.Int).Neg(huge), 0, -math.MaxFloat64},
	} {
		if got := Value(c.a, c.dec); got != c.want {
			t.Errorf("Value(%v, %d) = %v, want %v", c.a, c.dec, got, c.want)
		}
	}
}
