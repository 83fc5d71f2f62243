-- Claims a heuristics pass for runner $1 and records its start, unless another runner's pass
-- started less than $2 (an interval) ago; runs holding the heuristics advisory lock, in the
-- transaction that holds it. A row comes back when the pass is claimed. The runner that made
-- the last pass keeps its turn at each of its rounds (they are an interval apart), another
-- takes over once the last pass is an interval old (that runner stopped or fell behind), or
-- when the recorded start is in the future (the database's clock went back).
INSERT INTO intel.heuristics_passes AS h (id, runner, started_at) VALUES (true, $1, now())
ON CONFLICT (id) DO UPDATE SET runner = excluded.runner, started_at = excluded.started_at
WHERE h.runner = excluded.runner OR h.started_at <= now() - $2::interval OR h.started_at > now()
RETURNING true
