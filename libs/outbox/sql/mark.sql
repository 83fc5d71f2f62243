-- Marks sent the rows of the outbox table %[1]s whose ids are $1 (bigint[]).
UPDATE %[1]s SET sent_at = now() WHERE id = ANY($1)
