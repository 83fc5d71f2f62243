-- Addresses matching a search: $1 an address prefix pattern, $2 a lower-cased label prefix
-- pattern (both LIKE patterns escaped with '\'), $3 the most of each kind. kind 0 is an address
-- match, 1 a label match; each part is read in index order (migration 00006).
(SELECT chain_type, address, 0 AS kind, label FROM intel.addresses
  WHERE address COLLATE "C" LIKE $1 ESCAPE '\'
  ORDER BY address COLLATE "C"
  LIMIT $3)
UNION ALL
(SELECT chain_type, address, 1 AS kind, label FROM intel.addresses
  WHERE label <> '' AND lower(label) COLLATE "C" LIKE $2 ESCAPE '\'
  ORDER BY lower(label) COLLATE "C", chain_type, address
  LIMIT $3)
