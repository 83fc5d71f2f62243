-- Waits for, and holds until the transaction ends, the relay lock of the outbox table named $1
-- (its quoted name): one relay at a time claims and publishes from a table, so the rows of a
-- key reach the topic in the order they were written. A 64-bit hash of the name, so tables of
-- different schemas on one server do not share a lock.
SELECT pg_advisory_xact_lock(hashtextextended('libs/outbox ' || $1, 0))
