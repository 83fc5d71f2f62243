-- Records runner $1's completed pass, started at $2 (heuristics_pass_claim.sql), in the
-- transaction holding the heuristics lock, just before it commits.
INSERT INTO intel.heuristics_passes (id, runner, started_at) VALUES (true, $1, $2)
ON CONFLICT (id) DO UPDATE SET runner = excluded.runner, started_at = excluded.started_at
