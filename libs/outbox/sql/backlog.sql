-- The unsent rows of the outbox table %[1]s: how many, and the seconds since the oldest was
-- written (0 when none is), on the database's clock. Both read the partial index on id WHERE
-- sent_at IS NULL that every outbox table has, so a table of sent rows costs nothing.
SELECT (SELECT count(*) FROM %[1]s WHERE sent_at IS NULL),
       coalesce((SELECT extract(epoch FROM now() - created_at)::float8 FROM %[1]s
                 WHERE sent_at IS NULL ORDER BY id LIMIT 1), 0)
