-- Whether observations past the applier's mark wait, read before taking the writers' lock so an
-- idle applier does not take it.
SELECT (SELECT id FROM balances.append_head) > (SELECT id FROM balances.apply_mark)
