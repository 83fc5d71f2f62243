-- How many pages observations has: a pruning pass walks them in ranges up to this (rows appended
-- after it starts land on later pages and are newer than any horizon anyway).
SELECT pg_relation_size('balances.observations') / current_setting('block_size')::bigint
