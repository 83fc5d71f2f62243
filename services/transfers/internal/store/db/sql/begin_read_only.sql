-- Opens the read-only transaction a statement under its generic plan runs in.
BEGIN READ ONLY
