-- The close of chain $1 holds this lock while it builds the announced hours; transfer writers
-- with a copy in those hours, reorgs of the chain and other replicas' closes of it wait.
SELECT pg_advisory_xact_lock(hashtext('market.flow_address_hours'), hashtext($1))
