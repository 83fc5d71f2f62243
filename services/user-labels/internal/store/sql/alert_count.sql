-- How many alerts the user ($1) keeps. Run with the user's version row locked (lock_owner.sql),
-- which every alert creation locks first, so the count stays true until the transaction ends.
SELECT count(*) FROM userdata.alerts WHERE user_id = $1
