package write

import (
	"fmt"
	"strings"
)

// Attribution groups. Every attributed address belongs to the groups its attribution names:
// "e:<entity>" (the entity, or the deposit service it is a deposit address of), "d:<entity>"
// (the entity's deposit addresses) and "t:<entityType>" — exactly the sets `base`/`from`/`to`
// name with an entity id, `deposit:` and `type:`. A group with more than a threshold of
// addresses is live: its rollups (grp_*) are maintained on write from the read model, and
// re-aggregated from pair_hourly when a relabel moves an address in or out of it.

// membershipSQL is a query yielding (address, grp) for the distinct addresses the query addrs
// yields, from the attribution read model (one index probe per address); live restricts it to
// live groups.
func membershipSQL(addrs string, live bool) string {
	q := `SELECT DISTINCT x.address, g.grp FROM (` + addrs + `) x(address)
  CROSS JOIN LATERAL (SELECT unnest(transfers.attribution_groups(a.entity_id, a.entity_type, a.deposit_service_id)) AS grp
                      FROM transfers.attributions a WHERE a.address = x.address) g`
	if live {
		q += `
  WHERE g.grp IN (SELECT grp FROM transfers.groups WHERE live)`
	}
	return q
}

// pairSource is what the rollup CTEs read: one row per (from_addr, to_addr, hour bucket, chain,
// token) with token_id, n, usd and value — pair_hourly's shape.
const pairCols = "from_addr, to_addr, bucket, chain, token, token_id, n, usd, value"

// pairsFromRows aggregates transfer rows (src: chain, block_time, from_addr, to_addr, token,
// token_id, unit_value, usd) into pair rows.
func pairsFromRows(src string) string {
	return `SELECT from_addr, to_addr, date_trunc('hour', block_time, 'UTC') AS bucket, chain, token, min(token_id) AS token_id,
         count(*) AS n, sum(coalesce(usd, 0)::numeric) AS usd, sum(unit_value::numeric) AS value
  FROM ` + src + ` GROUP BY 1, 2, 3, 4, 5`
}

// addrRollupCTEs returns CTEs that add sign × the pair rows of src to the rollups keyed by
// address and chain: pair_hourly, addr_daily, chain_hourly and chain_daily. Each groups first, so
// no statement touches a row twice, and orders its keys, so concurrent writers lock rows in one
// order.
func addrRollupCTEs(src string, sign int) string {
	p := addrRollupParts(src, sign)
	return p.pairs + `, ` + p.daily + `, ` + p.chainHourly + `, ` + p.chainDaily
}

// addrRollups are addrRollupCTEs one by one (CTEs rp, rd, rch, rcd).
type addrRollups struct{ pairs, daily, chainHourly, chainDaily string }

func addrRollupParts(src string, sign int) addrRollups {
	s := fmt.Sprint(sign)
	chain := func(name, table, unit string) string {
		return name + ` AS (
  INSERT INTO transfers.` + table + ` AS r (bucket, chain, token, token_id, n, usd)
  SELECT date_trunc('` + unit + `', bucket, 'UTC'), chain, token, min(token_id), ` + s + ` * sum(n), ` + s + ` * sum(usd)
  FROM ` + src + ` GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (bucket, chain, token) DO UPDATE SET n = r.n + excluded.n, usd = r.usd + excluded.usd
)`
	}
	return addrRollups{
		pairs: `rp AS (
  INSERT INTO transfers.pair_hourly AS r (` + pairCols + `)
  SELECT from_addr, to_addr, bucket, chain, token, token_id, ` + s + ` * n, ` + s + ` * usd, ` + s + ` * value
  FROM ` + src + ` ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (from_addr, to_addr, bucket, chain, token) DO UPDATE SET
    n = r.n + excluded.n, usd = r.usd + excluded.usd, value = r.value + excluded.value
)`,
		daily: `rd AS (
  INSERT INTO transfers.addr_daily AS r (address, bucket, chain, token, token_id, in_n, in_usd, in_value, out_n, out_usd, out_value)
  SELECT address, day, chain, token, min(token_id), ` + s + ` * sum(in_n), ` + s + ` * sum(in_usd), ` + s + ` * sum(in_value),
         ` + s + ` * sum(out_n), ` + s + ` * sum(out_usd), ` + s + ` * sum(out_value)
  FROM (SELECT from_addr AS address, date_trunc('day', bucket, 'UTC') AS day, chain, token, token_id,
               0 AS in_n, 0 AS in_usd, 0 AS in_value, n AS out_n, usd AS out_usd, value AS out_value FROM ` + src + `
        UNION ALL
        SELECT to_addr, date_trunc('day', bucket, 'UTC'), chain, token, token_id, n, usd, value, 0, 0, 0 FROM ` + src + `) x
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (address, bucket, chain, token) DO UPDATE SET
    in_n = r.in_n + excluded.in_n, in_usd = r.in_usd + excluded.in_usd, in_value = r.in_value + excluded.in_value,
    out_n = r.out_n + excluded.out_n, out_usd = r.out_usd + excluded.out_usd, out_value = r.out_value + excluded.out_value
)`,
		chainHourly: chain("rch", "chain_hourly", "hour"),
		chainDaily:  chain("rcd", "chain_daily", "day"),
	}
}

// addrRollupCleanup deletes the address rollup rows a subtraction of src emptied.
func addrRollupCleanup(src string) []string {
	return []string{
		`DELETE FROM transfers.pair_hourly r USING (SELECT from_addr, to_addr, bucket, chain, token FROM ` + src + `) k
		 WHERE r.from_addr = k.from_addr AND r.to_addr = k.to_addr AND r.bucket = k.bucket AND r.chain = k.chain AND r.token = k.token AND r.n = 0`,
		`DELETE FROM transfers.addr_daily r USING (SELECT DISTINCT a, date_trunc('day', bucket, 'UTC') b, chain, token
		   FROM ` + src + `, LATERAL (VALUES (from_addr), (to_addr)) v(a)) k
		 WHERE r.address = k.a AND r.bucket = k.b AND r.chain = k.chain AND r.token = k.token AND r.in_n = 0 AND r.out_n = 0`,
		`DELETE FROM transfers.chain_hourly r USING (SELECT DISTINCT bucket b, chain, token FROM ` + src + `) k
		 WHERE r.bucket = k.b AND r.chain = k.chain AND r.token = k.token AND r.n = 0`,
		`DELETE FROM transfers.chain_daily r USING (SELECT DISTINCT date_trunc('day', bucket, 'UTC') b, chain, token FROM ` + src + `) k
		 WHERE r.bucket = k.b AND r.chain = k.chain AND r.token = k.token AND r.n = 0`,
	}
}

// withGroups is a query yielding the pair rows of src with fg and tg, the groups memb (address,
// grp) gives their sender and recipient.
func withGroups(src, memb string) string {
	return `SELECT p.*, coalesce(mf.g, '{}') AS fg, coalesce(mt.g, '{}') AS tg FROM ` + src + ` p
  LEFT JOIN (SELECT address, array_agg(grp) AS g FROM ` + memb + ` GROUP BY address) mf ON mf.address = p.from_addr
  LEFT JOIN (SELECT address, array_agg(grp) AS g FROM ` + memb + ` GROUP BY address) mt ON mt.address = p.to_addr`
}

// groupSides is a CTE body: the pair rows of src (with fg and tg, see withGroups) with each group
// of their sender or recipient, and whether the sender (o) and the recipient (i) are in it.
// fg and tg come along: grp_edges keeps the type groups of both sides. grpOK, when set,
// restricts the groups (column grp). timed says src has tf and tl, its pair rows' first and
// last transfer times, and uid, the uid of a pair row's one transfer (the apply's pair rows);
// otherwise they are NULL, unknown.
func groupSides(src, grpOK string, timed bool) string {
	w := ""
	if grpOK != "" {
		w = " WHERE " + grpOK
	}
	times := "NULL::timestamptz AS tf, NULL::timestamptz AS tl, NULL::uuid AS uid"
	if timed {
		times = "p.tf, p.tl, p.uid"
	}
	return `SELECT * FROM (SELECT x.g AS grp, p.from_addr, p.to_addr, p.bucket, p.chain, p.token, p.token_id, p.n, p.usd, p.value,
         x.g = ANY(p.fg) AS o, x.g = ANY(p.tg) AS i, p.fg, p.tg, ` + times + `
  FROM ` + src + ` p CROSS JOIN LATERAL (SELECT DISTINCT g FROM unnest(p.fg || p.tg) g) x) y` + w
}

// groupPairs is a CTE body: the pair rows of src with every (sender's live group, recipient's
// live group) pair that records.PairKept names; pairOK, when set, restricts them further (columns fg,
// tg). Pairs of one group are its self figures, which grp_hourly has.
func groupPairs(src, pairOK string) string {
	w := " WHERE fg <> tg AND fg NOT LIKE 'd:%' AND tg NOT LIKE 'd:%'"
	if pairOK != "" {
		w += " AND " + pairOK
	}
	return `SELECT * FROM (SELECT f AS fg, t AS tg, p.bucket, p.chain, p.token, p.token_id, p.n, p.usd
    FROM ` + src + ` p CROSS JOIN LATERAL unnest(p.fg) f CROSS JOIN LATERAL unnest(p.tg) t) x` + w
}

// groupRollupCTEs returns CTEs adding sign × the pair rows of src (with fg and tg, the groups
// of their sender and recipient) to the groups' rollups: grp_hourly, grp_daily,
// grp_pair_hourly, grp_pair_daily, and for entity groups grp_edges and grp_cp. src rows must be
// unique per pair key.
func groupRollupCTEs(src string, sign int, grpOK, pairOK string) string {
	p := groupRollupParts(sign)
	return `gsides AS (` + groupSides(src, grpOK, false) + `), gpairs AS (` + groupPairs(src, pairOK) + `),
` + p.hourly + `, ` + p.daily + `,
` + p.pairHourly + `, ` + p.pairDaily + `,
` + p.edges + `, ` + p.cp
}

// groupRollups are groupRollupCTEs' upserts one by one (CTEs gh, gd, gph, gpd, ge, gc). They
// read the CTEs gsides (groupSides) and gpairs (groupPairs).
type groupRollups struct{ hourly, daily, pairHourly, pairDaily, edges, cp string }

func groupRollupParts(sign int) groupRollups {
	s := fmt.Sprint(sign)
	flow := func(name, table, unit string) string {
		return name + ` AS (
  INSERT INTO transfers.` + table + ` AS r (grp, bucket, chain, token, token_id, in_n, in_usd, out_n, out_usd, self_n, self_usd)
  SELECT grp, date_trunc('` + unit + `', bucket, 'UTC'), chain, token, min(token_id),
         ` + s + ` * sum(CASE WHEN i THEN n ELSE 0 END), ` + s + ` * sum(CASE WHEN i THEN usd ELSE 0 END),
         ` + s + ` * sum(CASE WHEN o THEN n ELSE 0 END), ` + s + ` * sum(CASE WHEN o THEN usd ELSE 0 END),
         ` + s + ` * sum(CASE WHEN o AND i THEN n ELSE 0 END), ` + s + ` * sum(CASE WHEN o AND i THEN usd ELSE 0 END)
  FROM gsides GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (grp, bucket, chain, token) DO UPDATE SET
    in_n = r.in_n + excluded.in_n, in_usd = r.in_usd + excluded.in_usd, out_n = r.out_n + excluded.out_n,
    out_usd = r.out_usd + excluded.out_usd, self_n = r.self_n + excluded.self_n, self_usd = r.self_usd + excluded.self_usd
)`
	}
	pair := func(name, table, unit string) string {
		return name + ` AS (
  INSERT INTO transfers.` + table + ` AS r (from_grp, to_grp, bucket, chain, token, token_id, n, usd)
  SELECT fg, tg, date_trunc('` + unit + `', bucket, 'UTC'), chain, token, min(token_id), ` + s + ` * sum(n), ` + s + ` * sum(usd)
  FROM gpairs GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (from_grp, to_grp, bucket, chain, token) DO UPDATE SET n = r.n + excluded.n, usd = r.usd + excluded.usd
)`
	}
	return groupRollups{
		hourly:     flow("gh", "grp_hourly", "hour"),
		daily:      flow("gd", "grp_daily", "day"),
		pairHourly: pair("gph", "grp_pair_hourly", "hour"),
		pairDaily:  pair("gpd", "grp_pair_daily", "day"),
		edges: `ge AS (
  INSERT INTO transfers.grp_edges AS r (grp, bucket, from_addr, to_addr, chain, token, token_id, side, n, usd, value, from_t, to_t, t_first, t_last, uid)
  SELECT grp, bucket, from_addr, to_addr, chain, token, token_id, CASE WHEN o AND i THEN 3 WHEN o THEN 1 ELSE 2 END,
         ` + s + ` * n, ` + s + ` * usd, ` + s + ` * value, transfers.type_group(fg), transfers.type_group(tg), tf, tl, ` + edgeUID(sign) + `
  FROM gsides WHERE grp LIKE 'e:%' ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (grp, bucket, from_addr, to_addr, chain, token) DO UPDATE SET
    side = excluded.side, n = r.n + excluded.n, usd = r.usd + excluded.usd, value = r.value + excluded.value` + edgeTimes(sign) + `
)`,
		cp: `gc AS (
  INSERT INTO transfers.grp_cp AS r (grp, chain, cp, in_n, in_usd, in_value, out_n, out_usd, out_value)
  SELECT grp, chain, CASE WHEN o THEN to_addr ELSE from_addr END,
         ` + s + ` * sum(CASE WHEN i THEN n ELSE 0 END), ` + s + ` * sum(CASE WHEN i THEN usd ELSE 0 END),
         ` + s + ` * sum(CASE WHEN i THEN value ELSE 0 END), ` + s + ` * sum(CASE WHEN o THEN n ELSE 0 END),
         ` + s + ` * sum(CASE WHEN o THEN usd ELSE 0 END), ` + s + ` * sum(CASE WHEN o THEN value ELSE 0 END)
  FROM gsides WHERE grp LIKE 'e:%' AND o <> i GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (grp, chain, cp) DO UPDATE SET
    in_n = r.in_n + excluded.in_n, in_usd = r.in_usd + excluded.in_usd, in_value = r.in_value + excluded.in_value,
    out_n = r.out_n + excluded.out_n, out_usd = r.out_usd + excluded.out_usd, out_value = r.out_value + excluded.out_value
)`,
	}
}

// edgeUID is the uid a new pair row keeps (migration 22): its one transfer's, when an addition
// creates it from one transfer whose time is known (the apply's pair rows), else NULL. Any
// change of an existing row's count makes it NULL (migration 22's trigger, whatever version
// writes): a row holding a uid holds exactly that transfer, at t_first.
func edgeUID(sign int) string {
	if sign < 0 {
		return "NULL::uuid"
	}
	return "CASE WHEN n = 1 AND tf IS NOT NULL THEN uid END"
}

// edgeTimes is the update of a pair row's t_first and t_last (migration 19: bounds on its
// transfers' times, NULL when unknown) as sign × its new transfers are added. An addition keeps
// the bounds exact where both sides know them and unknown otherwise; a subtraction keeps them:
// the rest of the row's transfers lie within them still (edgeNewestPage relies on no more).
func edgeTimes(sign int) string {
	if sign < 0 {
		return ""
	}
	return `,
    t_first = CASE WHEN r.t_first IS NULL OR excluded.t_first IS NULL THEN NULL ELSE least(r.t_first, excluded.t_first) END,
    t_last = CASE WHEN r.t_last IS NULL OR excluded.t_last IS NULL THEN NULL ELSE greatest(r.t_last, excluded.t_last) END`
}

// groupRollupCleanup deletes the group rollup rows a subtraction of src (pair rows of memb's
// addresses) emptied.
func groupRollupCleanup(src, memb string) string {
	return `WITH gsrc AS (` + withGroups(src, memb) + `), gsides AS (` + groupSides("gsrc", "", false) + `), gpairs AS (` + groupPairs("gsrc", "") + `),
d1 AS (DELETE FROM transfers.grp_hourly r USING (SELECT DISTINCT grp, bucket, chain, token FROM gsides) k
  WHERE r.grp = k.grp AND r.bucket = k.bucket AND r.chain = k.chain AND r.token = k.token AND r.in_n = 0 AND r.out_n = 0),
d2 AS (DELETE FROM transfers.grp_daily r USING (SELECT DISTINCT grp, date_trunc('day', bucket, 'UTC') bucket, chain, token FROM gsides) k
  WHERE r.grp = k.grp AND r.bucket = k.bucket AND r.chain = k.chain AND r.token = k.token AND r.in_n = 0 AND r.out_n = 0),
d3 AS (DELETE FROM transfers.grp_pair_hourly r USING (SELECT DISTINCT fg, tg, bucket, chain, token FROM gpairs) k
  WHERE r.from_grp = k.fg AND r.to_grp = k.tg AND r.bucket = k.bucket AND r.chain = k.chain AND r.token = k.token AND r.n = 0),
d4 AS (DELETE FROM transfers.grp_pair_daily r USING (SELECT DISTINCT fg, tg, date_trunc('day', bucket, 'UTC') bucket, chain, token FROM gpairs) k
  WHERE r.from_grp = k.fg AND r.to_grp = k.tg AND r.bucket = k.bucket AND r.chain = k.chain AND r.token = k.token AND r.n = 0),
d5 AS (DELETE FROM transfers.grp_edges r USING (SELECT grp, bucket, from_addr, to_addr, chain, token FROM gsides WHERE grp LIKE 'e:%') k
  WHERE r.grp = k.grp AND r.bucket = k.bucket AND r.from_addr = k.from_addr AND r.to_addr = k.to_addr AND r.chain = k.chain
    AND r.token = k.token AND r.n = 0),
d6 AS (DELETE FROM transfers.grp_cp r USING (SELECT DISTINCT grp, chain, CASE WHEN o THEN to_addr ELSE from_addr END cp
    FROM gsides WHERE grp LIKE 'e:%' AND o <> i) k
  WHERE r.grp = k.grp AND r.chain = k.chain AND r.cp = k.cp AND r.in_n = 0 AND r.out_n = 0)
SELECT 1`
}

// groupTables are the live groups' rollups, with the columns naming a group.
var groupTables = []struct{ table, cols string }{
	{"grp_hourly", "grp"}, {"grp_daily", "grp"}, {"grp_edges", "grp"}, {"grp_cp", "grp"},
	{"grp_pair_hourly", "from_grp,to_grp"}, {"grp_pair_daily", "from_grp,to_grp"},
}

// dropGroupRowsSQL deletes every rollup row of the groups in the text[] parameter $1.
func dropGroupRowsSQL() []string {
	var out []string
	for _, t := range groupTables {
		var or []string
		for _, c := range strings.Split(t.cols, ",") {
			or = append(or, c+" = ANY($1::text[])")
		}
		out = append(out, "DELETE FROM transfers."+t.table+" WHERE "+strings.Join(or, " OR "))
	}
	return out
}

// groupRollupsOf returns a statement adding sign × the pair rows of src to the group rollups,
// with the groups memb gives their addresses.
func groupRollupsOf(src, memb string, sign int, grpOK, pairOK string) string {
	return `WITH gsrc AS (` + withGroups(src, memb) + `), ` + groupRollupCTEs("gsrc", sign, grpOK, pairOK) + ` SELECT 1`
}

// bumpEpochSQL marks a change of live-group membership: writers drop their cached memberships.
const bumpEpochSQL = `UPDATE transfers.group_epoch SET epoch = epoch + 1`
