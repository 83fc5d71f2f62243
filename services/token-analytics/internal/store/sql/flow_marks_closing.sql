-- Announces the close of chain $1's hours before $2: from the commit on, a transfer writer with
-- a copy in an hour from rolled_until up to closing_until takes the chain's close lock shared
-- (flows_close_lock_shared_try.sql, or waits for it outside its writer locks). Run under the
-- writers' exclusive lock, so every writer that read the earlier closing_until has committed.
UPDATE market.flow_marks SET closing_until = greatest(closing_until, $2) WHERE chain = $1
