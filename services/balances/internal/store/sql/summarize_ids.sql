-- Summarizes the id BRIN's page ranges appended since the last call (and the last partial one),
-- so a round's bitmap scan reads the pages of its id range and, beyond them, only what was
-- appended since (an unsummarized range matches every scan). It takes a SHARE UPDATE EXCLUSIVE
-- lock, which the consumer's COPY (ROW EXCLUSIVE) does not conflict with, but a vacuum or
-- analyze of observations does: the caller sets a short lock_timeout and skips it then.
SELECT brin_summarize_new_values('balances.observations_id_brin')
