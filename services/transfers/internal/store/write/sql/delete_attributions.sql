-- Deletes the attributions of chain types $1 and addresses $2, and logs each deleted one as changed.
WITH gone AS (DELETE FROM transfers.attributions a USING unnest($1::text[], $2::text[]) d(ct, addr)
    WHERE a.chain_type = d.ct AND a.address = d.addr RETURNING a.chain_type, a.address)
    INSERT INTO transfers.attribution_changes (chain_type, address) SELECT chain_type, address FROM gone
