-- How many alert methods the user ($1) keeps; run with the user's version row locked, as
-- alert_count.sql.
SELECT count(*) FROM userdata.alert_methods WHERE user_id = $1
