-- How many entities the user ($1) stores: their own entities, and the operator entities they
-- added addresses to. Run with the user's version row locked (every write that can add either
-- locks it), so the count stays true until the transaction ends.
SELECT (SELECT count(*) FROM userdata.entities WHERE user_id = $1)
     + (SELECT count(DISTINCT entity_id) FROM userdata.operator_additions WHERE user_id = $1)
