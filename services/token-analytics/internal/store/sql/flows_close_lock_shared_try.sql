-- flows_close_lock_shared.sql without waiting: a transfer writer holds its chains' writer locks
-- (flows_chain_lock.sql) here, so it must not wait for a build while other batches of those
-- chains queue behind it. Returns whether the close lock of every chain of $1 was granted (in
-- chain order); when not, the writer rolls back, which releases those granted, waits for the
-- build holding no other lock and runs again.
SELECT coalesce(bool_and(pg_try_advisory_xact_lock_shared(hashtext('market.flow_address_hours'), hashtext(chain))), true)
FROM (SELECT DISTINCT unnest($1::text[]) AS chain ORDER BY 1) c
