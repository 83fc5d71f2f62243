-- Every operator entity's balance of each (chain, token) now and at the end of UTC day $2, for
-- the ranking of /intelligence/entity_balance_changes: the maintained totals (entity_current)
-- less the changes of the days after $2. Every filter applies first, to the entity_current and
-- entities rows (sel, materialized so the planner cannot push the change sums above it), and
-- only the changes of the kept (entity, chain, token) keys after $2 are summed: a narrow filter
-- reads its keys' changes through the primary key; without a filter the interval's changes are
-- read in one pass and joined by hash (of the two branches of later, the one that does not
-- apply is cut by a one-time filter). No address row is read. A filter given as NULL is not applied: $3 entity ids, $4 entity types, $5 tags
-- (the entity has one of them), $6 negated tags (it has none of them), $7 pricing ids (as app
-- resolves a token's: the registry's, else the one observations carried, else the native coin's
-- of $8/$9). Only rows with a balance now or then come back, in key order, so the app's sums
-- run in one order.
WITH nat AS (
  SELECT * FROM unnest($8::text[], $9::text[]) AS n(chain, pricing_id)
), sel AS MATERIALIZED (
  SELECT c.entity_id, c.chain, c.token, c.balance
  FROM balances.entity_current c
  JOIN balances.entities e ON e.id = c.entity_id
  WHERE c.chain = ANY($1::text[])
    AND ($3::text[] IS NULL OR c.entity_id = ANY($3::text[]))
    AND ($4::text[] IS NULL OR e.type = ANY($4::text[]))
    AND ($5::text[] IS NULL OR EXISTS (
      SELECT 1 FROM jsonb_array_elements(e.populated_tags) t WHERE t->>'id' = ANY($5::text[])))
    AND ($6::text[] IS NULL OR NOT EXISTS (
      SELECT 1 FROM jsonb_array_elements(e.populated_tags) t WHERE t->>'id' = ANY($6::text[])))
    AND ($7::text[] IS NULL OR coalesce(
      (SELECT d.pricing_id FROM balances.deployments d WHERE d.chain = c.chain AND d.token = c.token),
      (SELECT nullif(o.token_id, '') FROM balances.observed_tokens o WHERE o.chain = c.chain AND o.token = c.token),
      (SELECT nat.pricing_id FROM nat WHERE nat.chain = c.chain AND c.token = '')
    ) = ANY($7::text[]))
), later AS (
  -- Without a filter every key is kept: the interval's changes are summed in one pass, which
  -- PostgreSQL runs in parallel, rather than joined to sel first.
  SELECT x.entity_id, x.chain, x.token, sum(x.delta) AS later
  FROM balances.entity_change x
  WHERE x.day > $2::date AND x.chain = ANY($1::text[])
    AND $3::text[] IS NULL AND $4::text[] IS NULL AND $5::text[] IS NULL AND $6::text[] IS NULL AND $7::text[] IS NULL
  GROUP BY 1, 2, 3
  UNION ALL
  SELECT x.entity_id, x.chain, x.token, sum(x.delta)
  FROM balances.entity_change x
  WHERE x.day > $2::date AND (x.entity_id, x.chain, x.token) IN (SELECT s.entity_id, s.chain, s.token FROM sel s)
    AND NOT ($3::text[] IS NULL AND $4::text[] IS NULL AND $5::text[] IS NULL AND $6::text[] IS NULL AND $7::text[] IS NULL)
  GROUP BY 1, 2, 3
)
SELECT s.entity_id, s.chain, s.token, s.balance::text, (s.balance - coalesce(b.later, 0))::text
FROM sel s
LEFT JOIN later b ON b.entity_id = s.entity_id AND b.chain = s.chain AND b.token = s.token
WHERE s.balance <> 0 OR coalesce(b.later, 0) <> 0
ORDER BY s.entity_id, s.chain, s.token
