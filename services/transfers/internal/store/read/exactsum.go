package read

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
)

// USD sums are kept exact: the rollups hold numeric sums of each transfer's usd::numeric, and a
// total read in parts (the rollups' whole buckets and the rows of the cut ones, a signed sum of
// group figures, a set's in less its self) is added as decimals, read from PostgreSQL as numeric,
// and converted to float64 once (Decimal.InexactFloat64, the nearest float, as numeric::float8
// gives), so
// a cut window answers the same figure as an aligned one over the same transfers.

// numDest scans a numeric (NULL as 0) into d exactly.
type numDest struct{ d *decimal.Decimal }

// num is the scan destination of a numeric column read into d.
func num(d *decimal.Decimal) *numDest { return &numDest{d} }

// ScanNumeric implements pgtype.NumericScanner.
func (n *numDest) ScanNumeric(v pgtype.Numeric) error {
	switch {
	case !v.Valid:
		*n.d = decimal.Zero
	case v.NaN || v.InfinityModifier != pgtype.Finite:
		return fmt.Errorf("sum is not a finite number")
	default:
		*n.d = decimal.NewFromBigInt(v.Int, v.Exp)
	}
	return nil
}
