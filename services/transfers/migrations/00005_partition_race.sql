-- +goose Up
-- Two writers (replicas, or the consumers of one replica) may need the same new month at once.
-- The advisory lock serialises them, but taking it does not refresh the catalog cache, so the
-- second writer's check after the lock can still miss the table the first one just committed and
-- its CREATE then fails with duplicate_table. That error now means what it says: the partition
-- exists (TestConcurrentWritersOfANewMonth).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION transfers.ensure_partition(tbl text, t timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    lo timestamptz := date_trunc('month', t, 'UTC');
    hi timestamptz := lo + interval '1 month';
    name text := tbl || '_' || to_char(lo AT TIME ZONE 'UTC', 'YYYYMM');
BEGIN
    IF to_regclass('transfers.' || name) IS NOT NULL THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('transfers.partition.' || name));
    IF to_regclass('transfers.' || name) IS NOT NULL THEN
        RETURN;
    END IF;
    EXECUTE format('CREATE TABLE transfers.%I PARTITION OF transfers.%I FOR VALUES FROM (%L) TO (%L)',
                   name, tbl, lo, hi);
EXCEPTION WHEN duplicate_table THEN
    RETURN;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION transfers.ensure_partition(tbl text, t timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    lo timestamptz := date_trunc('month', t, 'UTC');
    hi timestamptz := lo + interval '1 month';
    name text := tbl || '_' || to_char(lo AT TIME ZONE 'UTC', 'YYYYMM');
BEGIN
    IF to_regclass('transfers.' || name) IS NOT NULL THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('transfers.partition.' || name));
    IF to_regclass('transfers.' || name) IS NOT NULL THEN
        RETURN;
    END IF;
    EXECUTE format('CREATE TABLE transfers.%I PARTITION OF transfers.%I FOR VALUES FROM (%L) TO (%L)',
                   name, tbl, lo, hi);
END $$;
-- +goose StatementEnd
