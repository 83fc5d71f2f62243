package read

import "strings"

// aggArm renders "SELECT sel FROM table WHERE ..." for one arm (no order, no limit).
func (b *sqlb) aggArm(table, sel string, br branch, common []string) string {
	conds := append(append([]string(nil), common...), br.conds...)
	if br.drive != nil {
		conds = append([]string{b.member(br.driverCol, *br.drive)}, conds...)
	}
	w := ""
	if len(conds) > 0 {
		w = " WHERE " + strings.Join(conds, " AND ")
	}
	return "SELECT " + sel + " FROM " + table + w
}

// rollupConds are the chain, token and bucket-window conditions on a rollup table.
func (b *sqlb) rollupConds(f TransferFilter, tokenCols bool) []string {
	var c []string
	if len(f.Chains) > 0 {
		c = append(c, b.anyOf("chain", f.Chains))
	}
	if tokenCols {
		if tc := b.tokenCond([][2]string{{"token", "token_id"}}, f.TokenAddrs, f.TokenIDs); tc != "" {
			c = append(c, tc)
		}
	}
	if !f.TimeFrom.IsZero() {
		c = append(c, "bucket >= "+b.arg(f.TimeFrom))
	}
	if !f.TimeTo.IsZero() {
		c = append(c, "bucket <= "+b.arg(f.TimeTo))
	}
	return c
}
