-- The entity balance ranking's statement_timeout ($1, e.g. '5000ms'), for its transaction only
-- (set_config's is_local: SET LOCAL, which takes no parameter).
SELECT set_config('statement_timeout', $1, true)
