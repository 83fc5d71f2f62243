SELECT chain, token, balance::text FROM balances.entity_current
WHERE entity_id = $1 AND chain = ANY($2::text[]) AND balance > 0
