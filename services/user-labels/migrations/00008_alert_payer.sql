-- +goose Up
-- Who pays an alert's deliveries: the org id and tier of the caller who last created or
-- replaced the alert, as the caller's identity carried them, so that stream-fanout charges a
-- delivery as a stream delivery for that caller (the org's credit period and analytics for an
-- org member). NULL (the rows from before, an individual's org id) bills the user alone.
ALTER TABLE userdata.alerts ADD COLUMN org_id text, ADD COLUMN tier text;

-- +goose Down
ALTER TABLE userdata.alerts DROP COLUMN org_id, DROP COLUMN tier;
