SELECT chain, token, day, delta::text FROM balances.entity_change
WHERE entity_id = $1 AND chain = ANY($2::text[]) AND delta <> 0
