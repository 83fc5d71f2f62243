-- Set once per connection the store reads through. The store's statements are short and planned
-- per execution: JIT compilation (of a statement with many CTEs, far longer than running it) and
-- starting parallel workers cost more than they save, and a sort or hash of a few hundred
-- thousand rollup rows should stay in memory.
SET jit = off; SET max_parallel_workers_per_gather = 0; SET work_mem = '32MB'
