-- Observations appended and not applied yet (past the applier's mark).
SELECT count(*) FROM balances.observations WHERE id > (SELECT id FROM balances.apply_mark)
