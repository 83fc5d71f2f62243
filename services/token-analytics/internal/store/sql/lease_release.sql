-- Ends lease $1 if holder $2 holds it, so another replica takes it at its next try.
UPDATE market.leases SET until = '-infinity' WHERE name = $1 AND holder = $2
