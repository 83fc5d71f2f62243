-- The partitions of transfers.transfers, schema-qualified.
SELECT n.nspname || '.' || c.relname FROM pg_inherits i
  JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE i.inhparent = 'transfers.transfers'::regclass
