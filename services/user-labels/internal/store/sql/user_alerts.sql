-- The user's ($1) alerts by id, with their methods (secret included; the public answer leaves
-- it out).
SELECT a.id, a.user_id, a.name, a.enabled, a.base, a.from_refs, a.to_refs, a.tokens, a.chains,
       a.usd_gte, a.usd_lte, a.value_gte, a.value_lte, a.description, a.created_at, a.updated_at,
       a.org_id, a.tier,
       m.id, m.kind, m.url, m.secret
FROM userdata.alerts a JOIN userdata.alert_methods m ON m.id = a.method_id
WHERE a.user_id = $1
ORDER BY a.id
