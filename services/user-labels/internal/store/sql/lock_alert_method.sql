-- Locks the user's ($2) method $1 for its deletion, so no alert can start using it meanwhile
-- (share_alert_method.sql waits); no row when the user has no such method.
SELECT id FROM userdata.alert_methods WHERE id = $1 AND user_id = $2 FOR UPDATE
