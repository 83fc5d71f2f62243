-- The entity types the read model holds (type:<entityType> references; a type whose addresses
-- all went stays one), sorted.
SELECT substr(grp, 3) FROM transfers.groups WHERE grp LIKE 't:%' ORDER BY 1
