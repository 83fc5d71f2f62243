-- Locks the user's ($1) version row, creating it when missing, without moving either version:
-- the lock every write that adds labels or entities takes before counting them.
INSERT INTO userdata.user_versions AS v (user_id) VALUES ($1)
ON CONFLICT (user_id) DO UPDATE SET user_id = v.user_id
