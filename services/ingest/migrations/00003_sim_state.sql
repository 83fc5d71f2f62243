-- +goose Up
-- Where each simulated world stands (sim.State as JSON): its timeline and how many of its
-- transactions were published, saved before each publish, so a restart resumes the world
-- instead of publishing its transaction hashes again with other content. One row per world
-- (seed and chains).
CREATE TABLE ingest.sim_state (
    world      text PRIMARY KEY,
    state      jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE ingest.sim_state;
