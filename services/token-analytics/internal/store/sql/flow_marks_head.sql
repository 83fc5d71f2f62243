-- Moves the newest delivered hour of chains $1 to $2 (parallel arrays) when later, adding the
-- chain (nothing rolled yet) when new.
INSERT INTO market.flow_marks AS m (chain, head)
SELECT * FROM unnest($1::text[], $2::timestamptz[])
ORDER BY 1
ON CONFLICT (chain) DO UPDATE SET head = greatest(m.head, excluded.head)
