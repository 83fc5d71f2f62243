-- Moves the newest appended id to this append's last (currval: the identity's last value in
-- this session, the COPY having just drawn its ids). The appenders' lock is held, so every id up
-- to it is committed, rolled back or this transaction's: once this commits, the applier may take
-- every id up to it (take_observations.sql).
UPDATE balances.append_head SET id = greatest(id, currval(pg_get_serial_sequence('balances.observations', 'id')))
