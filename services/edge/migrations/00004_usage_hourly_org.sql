-- +goose Up
-- Hourly rows are kept per payer org too: an alert's usage (key id alert:<id>) is billed to the
-- org user-labels keeps with the alert, which changes when a member of another org replaces
-- it, and an hour's credits belong to the org its billing period counted them for.
ALTER TABLE edge.usage_hourly DROP CONSTRAINT usage_hourly_pkey,
    ADD PRIMARY KEY (key_id, hour, route, org_id);

-- +goose Down
-- Rows of one key, hour and route under several orgs are merged into one (the least org id
-- keeps them), as the previous key counted them.
ALTER TABLE edge.usage_hourly DROP CONSTRAINT usage_hourly_pkey;
CREATE TEMP TABLE usage_hourly_merged ON COMMIT DROP AS
    SELECT key_id, hour, route, min(user_id) AS user_id, min(org_id) AS org_id,
           sum(calls)::bigint AS calls, sum(credits)::bigint AS credits
    FROM edge.usage_hourly GROUP BY key_id, hour, route HAVING count(*) > 1;
DELETE FROM edge.usage_hourly u USING usage_hourly_merged m
    WHERE u.key_id = m.key_id AND u.hour = m.hour AND u.route = m.route;
INSERT INTO edge.usage_hourly SELECT * FROM usage_hourly_merged;
ALTER TABLE edge.usage_hourly ADD PRIMARY KEY (key_id, hour, route);
