package read

import (
	"context"

	"github.com/chainintel/chainintel/services/transfers/internal/store/records"
)

// groupSides are a filter's from and to sides (no base, no counterparties) when each is absent,
// one live group or the exclusion of one (simpleSide): g1 the from group, g2 the to group (""
// when absent), neg1 and neg2 whether they are exclusions. Its transfers are then a signed sum
// of a few group rollup figures (terms), which counts and histograms read instead of rows.
type groupSides struct {
	g1, g2     string
	neg1, neg2 bool
}

// groupSides returns f's from and to as groupSides; ok is false when a side is something else,
// or both are groups whose pair the rollups do not keep.
func (s *Reader) groupSides(ctx context.Context, f TransferFilter) (gs groupSides, ok bool, err error) {
	g1, neg1, ok1, err := s.simpleSide(ctx, f.From)
	if err != nil || !ok1 {
		return gs, false, err
	}
	g2, neg2, ok2, err := s.simpleSide(ctx, f.To)
	if err != nil || !ok2 {
		return gs, false, err
	}
	if g1 != "" && g2 != "" && g1 != g2 && !records.PairKept(g1, g2) {
		return gs, false, nil // no pair rollup of these groups
	}
	return groupSides{g1: g1, g2: g2, neg1: neg1, neg2: neg2}, true, nil
}

// sideFigure is one rollup figure a groupSides sum uses.
type sideFigure int

const (
	figTotal sideFigure = iota // every transfer (the per-chain rollup)
	figOut1                    // the from group's out
	figIn2                     // the to group's in
	figPair                    // from the from group to the to group (its self when they are one)
)

// sideTerm is sign times a figure.
type sideTerm struct {
	sign int64
	fig  sideFigure
}

// terms are the figures whose signed sum is the sides' transfers: from A is A's out, to B is
// B's in, both is the pair's; an exclusion subtracts from every transfer (or from the other
// side's figure).
func (gs groupSides) terms() []sideTerm {
	oneSide := func(fig sideFigure, neg bool) []sideTerm {
		if neg {
			return []sideTerm{{1, figTotal}, {-1, fig}}
		}
		return []sideTerm{{1, fig}}
	}
	switch {
	case gs.g1 == "" && gs.g2 == "":
		return []sideTerm{{1, figTotal}}
	case gs.g2 == "": // from only
		return oneSide(figOut1, gs.neg1)
	case gs.g1 == "": // to only
		return oneSide(figIn2, gs.neg2)
	case !gs.neg1 && !gs.neg2:
		return []sideTerm{{1, figPair}}
	case !gs.neg1:
		return []sideTerm{{1, figOut1}, {-1, figPair}}
	case !gs.neg2:
		return []sideTerm{{1, figIn2}, {-1, figPair}}
	}
	return []sideTerm{{1, figTotal}, {-1, figOut1}, {-1, figIn2}, {1, figPair}}
}

// figureArgs are the groups a figure reads as arguments of b (figureSQL's a1 and a2): rendered
// once for both grains of a count, since a statement may read one grain only and every argument
// it is given must appear in it.
func (gs groupSides) figureArgs(b *sqlb, fig sideFigure) (a1, a2 string) {
	if fig == figOut1 || fig == figPair {
		a1 = b.arg(gs.g1)
	}
	if fig == figIn2 || fig == figPair && gs.g1 != gs.g2 {
		a2 = b.arg(gs.g2)
	}
	return a1, a2
}

// figureSQL is where a figure lives in the rollups of one grain (sfx "_daily" or "_hourly"):
// from is the table with its conditions (conds added to the figure's own; a1 and a2 the from
// and to groups as figureArgs rendered them), n and usd its count and USD columns.
type figureSQL struct{ from, n, usd string }

func (gs groupSides) figureSQL(fig sideFigure, sfx string, conds []string, a1, a2 string) figureSQL {
	group := func(ga, prefix string) figureSQL {
		return figureSQL{"transfers.grp" + sfx + whereOf(append([]string{"grp = " + ga}, conds...)), prefix + "_n", prefix + "_usd"}
	}
	switch fig {
	case figOut1:
		return group(a1, "out")
	case figIn2:
		return group(a2, "in")
	case figPair:
		if gs.g1 == gs.g2 { // within one group: its self figures
			return group(a1, "self")
		}
		own := []string{"from_grp = " + a1, "to_grp = " + a2}
		return figureSQL{"transfers.grp_pair" + sfx + whereOf(append(own, conds...)), "n", "usd"}
	}
	return figureSQL{"transfers.chain" + sfx + whereOf(conds), "n", "usd"}
}
