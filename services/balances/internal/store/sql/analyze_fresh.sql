-- Statistics of the batch's fresh rows: without them the planner guesses the temp table's size
-- and may hash whole tables instead of probing current and address_daily by key.
ANALYZE fresh_obs
