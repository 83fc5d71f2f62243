-- +goose Up
-- The last heuristics pass's start and who made it (docs/intelligence.md, Heuristics), so that
-- replicas make one pass per interval between them instead of one each: a pass claims its turn
-- with sql/heuristics_pass_claim.sql holding the heuristics advisory lock, and a replica whose
-- round comes less than an interval after another runner's pass skips it. One row at most.
CREATE TABLE intel.heuristics_passes (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    runner text NOT NULL,
    started_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE intel.heuristics_passes;
