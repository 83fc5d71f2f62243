-- Deletes the rows of the outbox table %[1]s sent before $1; parked rows (failed set) stay for
-- an operator.
DELETE FROM %[1]s WHERE sent_at IS NOT NULL AND sent_at < $1 AND failed IS NULL
