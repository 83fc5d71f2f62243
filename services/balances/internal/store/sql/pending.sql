-- Whether observations past the applier's mark wait, read before taking the writers' lock so an
-- idle applier does not take it.
SELECT EXISTS (SELECT 1 FROM balances.observations WHERE id > (SELECT id FROM balances.apply_mark))
