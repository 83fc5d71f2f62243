-- The CEX/DEX class of each address of $1 chain types, $2 addresses (parallel arrays) that has
-- one.
SELECT c.chain_type, c.address, market.address_class(c.attributed_type, c.deposit_type, c.is_pool)
FROM unnest($1::text[], $2::text[]) AS k(chain_type, address)
JOIN market.address_classes c ON c.chain_type = k.chain_type AND c.address = k.address
WHERE market.address_class(c.attributed_type, c.deposit_type, c.is_pool) IS NOT NULL
