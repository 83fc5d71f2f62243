SELECT pg_advisory_xact_lock(hashtext('market.flow_hours'))
