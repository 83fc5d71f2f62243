-- Which of the addresses ($1 chain types, $2 addresses) are not marked as contracts yet.
SELECT DISTINCT u.ct, u.addr
FROM unnest($1::text[], $2::text[]) AS u(ct, addr)
LEFT JOIN intel.addresses a ON a.chain_type = u.ct AND a.address = u.addr
WHERE a.is_contract IS NOT TRUE
ORDER BY u.ct, u.addr
