-- A new delivery method of user $1.
INSERT INTO userdata.alert_methods (user_id, kind, url, description, secret)
VALUES ($1, $2, $3, $4, $5)
RETURNING id, created_at
