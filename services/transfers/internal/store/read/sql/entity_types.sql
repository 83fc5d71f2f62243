-- The entity types the read model gives addresses to (type:<entityType> references), sorted.
SELECT substr(grp, 3) FROM transfers.groups WHERE grp LIKE 't:%' AND size > 0 ORDER BY 1
