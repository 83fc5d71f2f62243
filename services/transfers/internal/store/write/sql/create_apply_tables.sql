-- The session's tables of a rollup apply, emptied: its rows (apply_rows), their addresses' live
-- groups (apply_memb), its pair rows with the groups of both sides (apply_pairs) and their group
-- sides (apply_sides). A reorg applies a batch inside its own transaction.
CREATE TEMP TABLE IF NOT EXISTS apply_rows ON COMMIT DELETE ROWS AS SELECT chain, block_hash, block_number, block_time, from_addr, to_addr, token, token_id, unit_value, usd, uid FROM transfers.transfers WITH NO DATA;
CREATE TEMP TABLE IF NOT EXISTS apply_memb (address text COLLATE "C", g text[]) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS apply_pairs ON COMMIT DELETE ROWS AS
  SELECT from_addr, to_addr, block_time AS bucket, chain, token, token_id, 0::bigint AS n, 0::numeric AS usd, 0::numeric AS value,
         '{}'::text[] AS fg, '{}'::text[] AS tg, block_time AS tf, block_time AS tl, uid
  FROM transfers.transfers WITH NO DATA;
CREATE TEMP TABLE IF NOT EXISTS apply_sides ON COMMIT DELETE ROWS AS SELECT * FROM (SELECT x.g AS grp, p.from_addr, p.to_addr, p.bucket, p.chain, p.token, p.token_id, p.n, p.usd, p.value,
         x.g = ANY(p.fg) AS o, x.g = ANY(p.tg) AS i, p.fg, p.tg, p.tf, p.tl, p.uid
  FROM apply_pairs p CROSS JOIN LATERAL (SELECT DISTINCT g FROM unnest(p.fg || p.tg) g) x) y WITH NO DATA;
TRUNCATE apply_rows, apply_memb, apply_pairs, apply_sides
