-- Takes or renews lease $1 for holder $2 until $4 microseconds after now ($3, or the database's
-- clock when null, so replicas with skewed clocks agree): it is taken when free, expired or
-- already $2's. A row back means $2 holds it.
INSERT INTO market.leases AS l (name, holder, until)
VALUES ($1, $2, coalesce($3::timestamptz, now()) + $4::bigint * interval '1 microsecond')
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
WHERE l.until < coalesce($3::timestamptz, now()) OR l.holder = excluded.holder
RETURNING l.until
