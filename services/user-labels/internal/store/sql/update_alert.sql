-- Overwrites every field of the user's ($1) alert $17, the payer (org $15, tier $16) included;
-- no row when the user has no such alert.
UPDATE userdata.alerts
SET name = $2, enabled = $3, base = $4, from_refs = $5, to_refs = $6, tokens = $7, chains = $8,
    usd_gte = $9, usd_lte = $10, value_gte = $11, value_lte = $12, description = $13,
    method_id = $14, org_id = $15, tier = $16, updated_at = now()
WHERE id = $17 AND user_id = $1
RETURNING id
