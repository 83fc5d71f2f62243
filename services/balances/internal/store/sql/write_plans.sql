-- A write's statements carry whole batches (thousands of keys in arrays or staged rows), so each
-- is planned for its own arguments and the tables as they are: a generic plan cached while a
-- table was small (top_holders, right after a trim) joins it by a scan per key for as long as
-- the connection lives, where a plan of its own probes the key.
SET LOCAL plan_cache_mode = force_custom_plan
