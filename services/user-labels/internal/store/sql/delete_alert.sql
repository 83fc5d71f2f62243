-- Deletes the user's ($2) alert $1; no row when the user has no such alert.
DELETE FROM userdata.alerts WHERE id = $1 AND user_id = $2 RETURNING id
