-- A new alert of user $1, paid by org $15 (NULL: the user alone) at tier $16.
INSERT INTO userdata.alerts (user_id, name, enabled, base, from_refs, to_refs, tokens, chains,
                             usd_gte, usd_lte, value_gte, value_lte, description, method_id,
                             org_id, tier)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
RETURNING id
