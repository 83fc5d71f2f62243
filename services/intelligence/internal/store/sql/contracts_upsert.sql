-- Records contracts from a creating transaction (code_known false) or from chain.contracts.v1
-- (code_known true), one element per contract of the parallel arrays $1..$11. The creation
-- (deployer, transaction, time, internal deployer) comes from whichever record knows it, the
-- code from a chain.contracts.v1 record; so records of one contract in any order and any number
-- of times leave the same row.
INSERT INTO intel.contracts AS c (chain, address, deployer, deploy_tx_hash, block_time_ms, bytecode_size,
    code_known, bytecode, function_sighashes, proxy_implementation, internal_deployer)
SELECT DISTINCT ON (ch, addr) ch, addr, dep, hash, ms, size, known, code, string_to_array(sels, ','), proxy, idep
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::int[], $7::bool[], $8::text[], $9::text[], $10::text[], $11::text[])
    AS u(ch, addr, dep, hash, ms, size, known, code, sels, proxy, idep)
ORDER BY ch, addr, known DESC, dep DESC
ON CONFLICT (chain, address) DO UPDATE SET
    deployer = CASE WHEN excluded.deployer <> '' THEN excluded.deployer ELSE c.deployer END,
    deploy_tx_hash = CASE WHEN excluded.deployer <> '' THEN excluded.deploy_tx_hash ELSE c.deploy_tx_hash END,
    block_time_ms = CASE WHEN excluded.deployer <> '' THEN excluded.block_time_ms
                         WHEN c.deployer = '' THEN LEAST(c.block_time_ms, excluded.block_time_ms) ELSE c.block_time_ms END,
    internal_deployer = CASE WHEN excluded.deployer <> '' THEN excluded.internal_deployer ELSE c.internal_deployer END,
    bytecode_size = CASE WHEN excluded.code_known OR NOT c.code_known THEN excluded.bytecode_size ELSE c.bytecode_size END,
    bytecode = CASE WHEN excluded.code_known THEN excluded.bytecode ELSE c.bytecode END,
    function_sighashes = CASE WHEN excluded.code_known THEN excluded.function_sighashes ELSE c.function_sighashes END,
    proxy_implementation = CASE WHEN excluded.code_known THEN excluded.proxy_implementation ELSE c.proxy_implementation END,
    code_known = c.code_known OR excluded.code_known
