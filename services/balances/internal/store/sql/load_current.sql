SELECT c.chain, c.address, c.token, c.block_number, c.block_hash, c.block_time, c.balance::text, c.owner, c.kind
FROM unnest($1::text[], $2::text[], $3::text[]) AS k(chain, address, token)
JOIN balances.current c ON c.chain = k.chain AND c.address = k.address AND c.token = k.token
