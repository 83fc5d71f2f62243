-- +goose Up
-- Rows of orphaned blocks that arrive after their reorg (the chain topics are not ordered with
-- chain.reorgs.v1) are set aside here instead of being dropped: a later reorg can name such a
-- block canonical again (the chain went back to it), and then its rows are written from here.
-- Kept for two days of chain time (store.ParkedRetention).
CREATE TABLE transfers.parked_transfers (
    LIKE transfers.transfers INCLUDING DEFAULTS,
    parked_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain, block_hash, uid)
);
CREATE TABLE transfers.parked_transactions (
    LIKE transfers.transactions INCLUDING DEFAULTS,
    parked_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain, block_hash, hash)
);
CREATE TABLE transfers.parked_swaps (
    LIKE transfers.swaps INCLUDING DEFAULTS,
    parked_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain, block_hash, tx_hash, id)
);

-- +goose Down
DROP TABLE transfers.parked_transfers, transfers.parked_transactions, transfers.parked_swaps;
