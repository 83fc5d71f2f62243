-- Subaccounts owned by $1 holding one of the tokens ($2 chains, $3 tokens), largest first.
SELECT c.address, c.owner, c.chain, c.token, c.balance::text
FROM balances.current c
JOIN unnest($2::text[], $3::text[]) AS t(chain, token) ON c.chain = t.chain AND c.token = t.token
WHERE c.owner = ANY($1::text[]) AND c.balance > 0
ORDER BY c.balance DESC, c.address
LIMIT $4
