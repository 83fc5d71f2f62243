-- A new alert of user $1.
INSERT INTO userdata.alerts (user_id, name, enabled, base, from_refs, to_refs, tokens, chains,
                             usd_gte, usd_lte, value_gte, value_lte, description, method_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
RETURNING id
