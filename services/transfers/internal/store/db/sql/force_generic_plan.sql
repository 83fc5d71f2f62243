-- Makes the transaction's statements run under their generic plan, for it alone.
SET LOCAL plan_cache_mode = force_generic_plan
