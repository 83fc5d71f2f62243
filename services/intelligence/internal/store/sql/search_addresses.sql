-- Addresses matching a search: $1 an address prefix and $2 a lower-cased label prefix, $3 the
-- most of each kind. kind 0 is an address match, 1 a label match; each part is read in index
-- order (migration 00006). The prefix is a byte range, [prefix, prefix || U+10FFFF), rather than
-- LIKE 'prefix%': a prepared statement's generic plan cannot turn a LIKE parameter into an index
-- range, a range it can. (No address or label holds U+10FFFF, a noncharacter.)
(SELECT chain_type, address, 0 AS kind, label FROM intel.addresses
  WHERE address COLLATE "C" >= $1 AND address COLLATE "C" < $1 || U&'\+10FFFF'
  ORDER BY address COLLATE "C"
  LIMIT $3)
UNION ALL
(SELECT chain_type, address, 1 AS kind, label FROM intel.addresses
  WHERE label <> '' AND lower(label) COLLATE "C" >= $2 AND lower(label) COLLATE "C" < $2 || U&'\+10FFFF'
  ORDER BY lower(label) COLLATE "C", chain_type, address
  LIMIT $3)
