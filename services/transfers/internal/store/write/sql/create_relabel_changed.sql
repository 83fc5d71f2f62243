-- The session's table of the addresses whose groups a batch of attribution changes changed.
CREATE TEMP TABLE IF NOT EXISTS relabel_changed (address text COLLATE "C" PRIMARY KEY) ON COMMIT DELETE ROWS
