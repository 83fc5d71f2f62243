-- The newest change's sequence number in intel.change_log (0 when empty), shared by the four
-- feeds: every writer of the logged tables holds the version lock to its commit, so a change
-- committed after this read has a higher number.
SELECT coalesce(max(seq), 0) FROM intel.change_log
