-- Appenders of observations hold this lock for their transaction (COPY included), so the ids of
-- one append are all higher than those of every append committed before it and lower than
-- those of every later one: the applier's mark (apply_mark) never passes an id that is still to
-- commit. It is not the writers' lock: an append waits only for another append.
SELECT pg_advisory_xact_lock(hashtext('chainintel.balances.append'))
