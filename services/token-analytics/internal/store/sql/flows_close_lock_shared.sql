-- A transfer writer with a copy in hours a close has announced (or settling copies it cannot
-- place by hour in advance), and a reorg, wait for the close of chains $1 that is building them
-- (in chain order), so the close never misses a copy committed after it read market.flows.
SELECT pg_advisory_xact_lock_shared(hashtext('market.flow_address_hours'), hashtext(chain))
FROM (SELECT DISTINCT unnest($1::text[]) AS chain ORDER BY 1) c
