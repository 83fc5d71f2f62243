-- The hour close groups and sorts a whole hour's transfer legs: with this much memory (for its
-- own transaction only; one close runs at a time) they are not spilled to disk.
SET LOCAL work_mem = '64MB'
