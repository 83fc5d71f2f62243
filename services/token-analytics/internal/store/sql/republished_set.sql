INSERT INTO market.republished (id, at) VALUES (true, $1)
ON CONFLICT (id) DO UPDATE SET at = excluded.at
