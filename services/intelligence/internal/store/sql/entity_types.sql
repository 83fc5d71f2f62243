-- The types operator entities have.
SELECT DISTINCT type FROM intel.entities WHERE type <> '' ORDER BY type
