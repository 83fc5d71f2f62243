-- A reorg, and a transfer writer that found the close lock taken (flows_close_lock_shared_try.sql,
-- rolled back, holding no other lock), wait for the close of chains $1 that is building their
-- hours (in chain order), so the close never misses a copy committed after it read market.flows.
SELECT pg_advisory_xact_lock_shared(hashtext('market.flow_address_hours'), hashtext(chain))
FROM (SELECT DISTINCT unnest($1::text[]) AS chain ORDER BY 1) c
