DELETE FROM balances.current c
USING unnest($1::text[], $2::text[], $3::text[]) AS k(chain, address, token)
WHERE c.chain = k.chain AND c.address = k.address AND c.token = k.token
