-- The first hour in [$2, $3) with a copy of chain $1 in market.flows (NULL when none), by
-- flows_chain_hour: the hour close starts its chunk of hours there, so a chain idle since
-- rolled_until (or with nothing rolled yet) is closed up to the clock without walking the empty
-- hours.
SELECT min(f.hour) FROM market.flows f WHERE f.chain = $1 AND f.hour >= $2 AND f.hour < $3
