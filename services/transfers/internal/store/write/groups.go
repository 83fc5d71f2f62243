package write

// Attribution groups. Every attributed address belongs to the groups its attribution names:
// "e:<entity>" (the entity, or the deposit service it is a deposit address of), "d:<entity>"
// (the entity's deposit addresses) and "t:<entityType>" — exactly the sets `base`/`from`/`to`
// name with an entity id, `deposit:` and `type:`. A group with more than a threshold of
// addresses is live: its rollups (grp_*) are maintained on write from the read model, and
// re-aggregated from pair_hourly when a relabel moves an address in or out of it.
//
// Every statement that adds to or subtracts from the rollups (sql/apply_*.sql,
// subtract_removed_transfers.sql, group_rollups.sql, build_new_groups.sql) follows the same rules: each upsert groups first, so no statement
// touches a row twice, and orders its keys, so concurrent writers lock rows in one order. A
// group's pair row (entity_pair_rows) keeps the type groups of both sides, bounds on its transfers'
// times (t_first, t_last: migration 19; an addition keeps them exact where both sides know them,
// a subtraction keeps them, as the rest of the row's transfers lie within them still) and, when
// an addition creates it from one transfer whose time is known, that transfer's uid (migration
// 22; any change of its count makes it NULL). Pair rows of one group are its self figures, which
// grp_hourly has.

// The signs group_rollups.sql takes: it adds sub_pairs to the group rollups or subtracts them
// (a relabel's moves, a reorg's removed transfers).
const (
	signAdd      = 1
	signSubtract = -1
)

// dropEmptiedRollups delete the rollup rows a subtraction of sub_pairs (with sub_memb's groups)
// emptied, address and chain rollups first.
var dropEmptiedRollups = []string{dropEmptiedPairHourlySQL, dropEmptiedAddrDailySQL, dropEmptiedChainHourlySQL,
	dropEmptiedChainDailySQL, dropEmptiedGroupRollupsSQL}

// dropGroupRows delete every rollup row of the groups in the text[] parameter $1, one live-group
// rollup each.
var dropGroupRows = []string{dropGroupRowsGrpHourlySQL, dropGroupRowsGrpDailySQL, dropGroupRowsEntityPairRowsSQL,
	dropGroupRowsGrpCpSQL, dropGroupRowsGrpPairHourlySQL, dropGroupRowsGrpPairDailySQL}
