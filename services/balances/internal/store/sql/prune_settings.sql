-- The pruning statement's transaction settings. jit off: a range of pages is thousands of rows
-- each probing observations_key, which the planner costs above jit_above_cost, and compiling the
-- statement takes longer than running it.
SELECT set_config('jit', 'off', true)
