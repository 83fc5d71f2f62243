-- The rest of the applier's round plans as configured (apply_settings.sql turned sequential
-- scans and jit off for take_observations alone): both back to the session's own values.
SELECT set_config(name, reset_val, true) FROM pg_settings WHERE name IN ('enable_seqscan', 'jit')
