-- The figures of GET /networks/status for chains $1 with their native pricing ids $2 (parallel
-- arrays), one row per chain with a block that is not orphaned:
-- * the tip: the highest live block, its time;
-- * the hour of blocks up to the tip: their transactions, the oldest block's time and
--   transactions (a rate counts what came after the oldest block), the mean of the blocks'
--   lowest gas prices and the time of the newest block that had one;
-- * the transfers counted in the 24 hourly rollups up to the tip's hour, and the newest such hour;
-- * the native coin's newest quote and its price 24 hours before that quote.
-- The tip and the hour's window are read per chain through the (chain, number) and (chain, time)
-- indexes, so a request reads the hour of blocks it reports, not every retained block.
WITH c AS (
    SELECT * FROM unnest($1::text[], $2::text[]) AS c(chain, pricing_id)
)
SELECT c.chain, tip.number, tip.time,
       w.txs, w.oldest, w.oldest_txs, w.gas, w.gas_time,
       f.transfers, f.newest_hour,
       t.price, t.price_time, t.market_cap, t.volume_24h,
       (SELECT p.price FROM market.prices p
        WHERE p.pricing_id = c.pricing_id AND p.time <= t.price_time - interval '24 hours'
        ORDER BY p.time DESC, p.granularity DESC LIMIT 1)
FROM c
CROSS JOIN LATERAL (
    SELECT b.number, b.time FROM market.network_blocks b
    WHERE b.chain = c.chain
      AND NOT EXISTS (SELECT 1 FROM market.orphaned_blocks o WHERE o.chain = b.chain AND o.block_hash = b.block_hash)
    ORDER BY b.number DESC, b.time DESC LIMIT 1
) tip
CROSS JOIN LATERAL (
    SELECT sum(l.transactions)::bigint AS txs, min(l.time) AS oldest,
           (array_agg(l.transactions ORDER BY l.time, l.number))[1] AS oldest_txs,
           avg(l.min_gas_price) AS gas, max(l.time) FILTER (WHERE l.min_gas_price IS NOT NULL) AS gas_time
    FROM market.network_blocks l
    WHERE l.chain = c.chain AND l.time > tip.time - interval '1 hour' AND l.time <= tip.time
      AND NOT EXISTS (SELECT 1 FROM market.orphaned_blocks o WHERE o.chain = l.chain AND o.block_hash = l.block_hash)
) w
CROSS JOIN LATERAL (
    SELECT coalesce(sum(h.transfers), 0)::bigint AS transfers, max(h.hour) AS newest_hour
    FROM market.flow_hours h
    WHERE h.chain = c.chain AND h.hour > tip.time - interval '24 hours' AND h.hour <= tip.time
) f
LEFT JOIN market.tokens t ON t.pricing_id = c.pricing_id
ORDER BY c.chain
