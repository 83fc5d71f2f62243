-- How many labels the user stores ($1), and how many of the labels named by the parallel arrays
-- $2 (chain types) and $3 (addresses) are among them. Run with the user's version row locked
-- (every label write locks it first), so both stay true until the transaction ends.
SELECT (SELECT count(*) FROM userdata.labels WHERE user_id = $1),
       (SELECT count(*)
        FROM unnest($2::text[], $3::text[]) AS q(chain_type, address)
        JOIN userdata.labels l ON l.user_id = $1 AND l.chain_type = q.chain_type AND l.address = q.address)
