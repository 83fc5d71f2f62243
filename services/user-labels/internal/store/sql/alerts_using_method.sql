-- The alerts using method $1, by id.
SELECT id FROM userdata.alerts WHERE method_id = $1 ORDER BY id
