-- A cluster's members and the sums of their activity, each transfer touching a member once (as
-- EntityActivity for an entity). The per-address sum counts a transfer between two members twice
-- (out and in), so every row carries the cluster's internal figure, the sum of the pairs of
-- pair_activity whose two addresses are members, to subtract once. Membership changes every
-- heuristics pass, so the figure is read here rather than kept. Each internal pair is an
-- outgoing pair of one member, and each member's outgoing pairs are read once, at most as many
-- as the cluster has members (primary-key range): a member with fewer has them all read, and
-- those into members are internal; one with that many has one primary-key probe per member
-- instead (a busy sender's counterparties are not read), so the read is bounded by the sum over
-- members of min(outgoing pairs, members), plus a probe per member for each busy one, at most
-- twice members squared. Clusters of more than $2 members are not read: the statement returns
-- $2 + 1 of their members and reads neither their pairs nor their activity; the caller refuses
-- the summary.
WITH m AS MATERIALIZED (
    SELECT a.chain_type, a.address
    FROM intel.addresses a
    WHERE a.cluster_ids @> ARRAY[$1::text] AND a.cluster_ids <> '{}'
    LIMIT $2::int + 1
), k AS (
    SELECT count(*) AS n FROM m
), r AS MATERIALIZED (
    -- Per member, its outgoing pairs when it has fewer than the cluster has members, else one
    -- row saying it has that many (many): each member's range read on its own (a materialized
    -- CTE, so no plan joins the members with each other first).
    SELECT m.chain_type, m.address, p.to_addr, p.volume_usd, p.transfer_count, p.many
    FROM m
    CROSS JOIN LATERAL (
        SELECT s.to_addr, s.volume_usd, s.transfer_count, s.c >= (SELECT n FROM k) AS many
        FROM (
            SELECT q.to_addr, q.volume_usd, q.transfer_count, count(*) OVER () AS c, row_number() OVER () AS rn
            FROM (
                SELECT q.to_addr, q.volume_usd, q.transfer_count FROM intel.pair_activity q
                WHERE q.chain_type = m.chain_type AND q.from_addr = m.address
                LIMIT (SELECT n FROM k)
            ) q
        ) s
        WHERE s.c < (SELECT n FROM k) OR s.rn = 1
    ) p
    WHERE (SELECT n FROM k) <= $2::int
), i AS (
    SELECT COALESCE(sum(x.usd), 0) AS usd, COALESCE(sum(x.cnt), 0) AS cnt
    FROM (
        SELECT r.volume_usd AS usd, r.transfer_count AS cnt
        FROM r
        JOIN m t ON t.chain_type = r.chain_type AND t.address = r.to_addr
        WHERE NOT r.many
        UNION ALL
        -- The members with many: one primary-key probe per member (LIMIT keeps it a probe,
        -- never a read of every pair into a member through the (chain_type, to_addr) index).
        SELECT p.volume_usd, p.transfer_count
        FROM r f
        JOIN m t ON t.chain_type = f.chain_type
        CROSS JOIN LATERAL (
            SELECT q.volume_usd, q.transfer_count FROM intel.pair_activity q
            WHERE q.chain_type = f.chain_type AND q.from_addr = f.address AND q.to_addr = t.address
            LIMIT 1
        ) p
        WHERE f.many
    ) x
)
SELECT m.chain_type, m.address, COALESCE(act.volume_usd, 0), COALESCE(act.transfer_count, 0),
       COALESCE(act.first_ms, 0), COALESCE(act.last_ms, 0), i.usd, i.cnt
FROM m
CROSS JOIN i
LEFT JOIN LATERAL (
    SELECT x.volume_usd, x.transfer_count, x.first_ms, x.last_ms FROM intel.address_activity x
    WHERE x.chain_type = m.chain_type AND x.address = m.address AND (SELECT n FROM k) <= $2::int
) act ON true
ORDER BY m.chain_type, m.address
