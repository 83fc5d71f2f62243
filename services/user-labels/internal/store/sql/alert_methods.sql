-- The user's ($1) delivery methods by id, without their secrets.
SELECT id, kind, url, description, created_at FROM userdata.alert_methods
WHERE user_id = $1
ORDER BY id
