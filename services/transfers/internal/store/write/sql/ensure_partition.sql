-- Creates the monthly partition of table $1 that time $2 falls in, unless it exists.
SELECT transfers.ensure_partition($1, $2)
