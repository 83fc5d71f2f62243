-- Ends the read-only transaction of a statement run under its generic plan.
COMMIT
