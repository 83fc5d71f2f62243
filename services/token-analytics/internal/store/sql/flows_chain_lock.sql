-- Transfer writers of one chain run one after the other (in chain order when a batch has
-- several): each sees every copy the others stored when it asks which of its natural ids were
-- seen before (flows_seen.sql) and decides which copy counts.
SELECT pg_advisory_xact_lock(hashtext('market.flows'), hashtext(chain))
FROM (SELECT DISTINCT unnest($1::text[]) AS chain ORDER BY 1) c
