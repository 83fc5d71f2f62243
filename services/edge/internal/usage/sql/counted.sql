-- The total of each period (rows of kind 0, i = its place in the arrays) and which of the
-- event ids were counted (kind 1), in one statement and so one snapshot: a period's total
-- includes exactly the counted events of that snapshot.
SELECT 0 AS kind, p.i, coalesce(cp.credits_used, 0)::bigint, coalesce(cp.through_ms, 0)::bigint, ''
FROM unnest($1::text[], $2::text[], $3::timestamptz[]) WITH ORDINALITY AS p(entity_type, entity_id, period_start, i)
LEFT JOIN edge.credit_periods cp
  ON cp.entity_type = p.entity_type AND cp.entity_id = p.entity_id AND cp.period_start = p.period_start
UNION ALL
SELECT 1, 0, 0, 0, event_id FROM edge.usage_events WHERE event_id = ANY($4::text[])
