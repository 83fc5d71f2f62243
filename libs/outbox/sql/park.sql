-- Parks rows of the outbox table %[1]s the brokers refuse for good: the rows whose ids are $1
-- (bigint[]) leave the queue (sent_at) with the brokers' answer in failed, from $2 (text[]).
UPDATE %[1]s AS o SET sent_at = now(), failed = r.reason
FROM unnest($1::bigint[], $2::text[]) AS r(id, reason)
WHERE o.id = r.id
