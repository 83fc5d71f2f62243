package app

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

// ratUnits is the reference: the exact quotient rounded by big.Rat.
func ratUnits(v *big.Int, decimals int32) float64 {
	r := new(big.Rat).SetFrac(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))
	f, _ := r.Float64()
	return f
}

// units must round exactly as big.Rat does, for balances up to 78 digits and any decimals.
func TestUnitsIsTheNearestFloat(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	max := new(big.Int).Exp(big.NewInt(10), big.NewInt(78), nil)
	for i := 0; i < 20000; i++ {
		digits := r.Intn(78) + 1
		v := new(big.Int).Rand(r, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil))
		v.Add(v, big.NewInt(1))
		if v.Cmp(max) >= 0 {
			continue
		}
		d := int32(r.Intn(40))
		if got, want := units(v, d), ratUnits(v, d); got != want || math.IsInf(got, 0) {
			t.Fatalf("units(%s, %d) = %v, want %v", v, d, got, want)
		}
	}
	if got := units(big.NewInt(5), 100); got != ratUnits(big.NewInt(5), 100) {
		t.Fatalf("decimals beyond the table: %v", got)
	}
}
