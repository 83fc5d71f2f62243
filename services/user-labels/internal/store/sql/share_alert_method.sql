-- Locks the user's ($2) method $1 against deletion until the transaction ends (a deletion locks
-- it FOR UPDATE, lock_alert_method.sql); no row when the user has no such method.
SELECT id FROM userdata.alert_methods WHERE id = $1 AND user_id = $2 FOR SHARE
