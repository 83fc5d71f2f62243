-- The batch's new observations of addresses an operator entity holds.
SELECT chain, address, token, block_number, block_hash, block_time, balance::text, owner, kind
FROM fresh_obs WHERE held
