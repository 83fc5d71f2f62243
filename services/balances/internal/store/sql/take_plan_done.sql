-- The rest of the applier's round plans as configured (apply_settings.sql turned sequential
-- scans off for take_observations alone).
SET LOCAL enable_seqscan TO DEFAULT
