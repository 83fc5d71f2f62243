-- How many entities the user ($1) stores. Run with the user's version row locked (every entity
-- write locks it), so the count stays true until the transaction ends.
SELECT count(*) FROM userdata.entities WHERE user_id = $1
