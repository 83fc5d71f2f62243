-- Whether runner $1 may make a heuristics pass now, and the pass's start: not while another
-- runner's pass started less than $2 (an interval) ago. Runs holding the heuristics advisory
-- lock, in the transaction that holds it; a read only, so that transaction keeps no transaction
-- id (and holds back no vacuum) through the pass: the start is recorded as the pass completes
-- (heuristics_pass_record.sql). The runner that made the last pass keeps its turn at each of its
-- rounds (they are an interval apart), another takes over once the last pass is an interval old
-- (that runner stopped or fell behind), or when the recorded start is in the future (the
-- database's clock went back). statement_timestamp(), not now(): the transaction began before
-- the lock was taken.
SELECT statement_timestamp(), NOT EXISTS (
    SELECT 1 FROM intel.heuristics_passes h
    WHERE h.runner <> $1
      AND h.started_at > statement_timestamp() - $2::interval
      AND h.started_at <= statement_timestamp())
