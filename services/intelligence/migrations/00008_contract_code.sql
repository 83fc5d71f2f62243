-- +goose Up
-- What chain.contracts.v1 says of a contract: its runtime code, the selectors of its dispatcher,
-- the implementation it delegates to when a proxy, and the contract that created it when created
-- inside a call. code_known is false for rows only a creating transaction wrote
-- (chain.transactions.v1). deployer and deploy_tx_hash are '' for a contract first seen as a
-- token whose creation was not seen.
ALTER TABLE intel.contracts
    ADD COLUMN bytecode             text    NOT NULL DEFAULT '',
    ADD COLUMN function_sighashes   text[],
    ADD COLUMN proxy_implementation text    NOT NULL DEFAULT '',
    ADD COLUMN internal_deployer    text    NOT NULL DEFAULT '',
    ADD COLUMN code_known           boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE intel.contracts DROP COLUMN bytecode, DROP COLUMN function_sighashes, DROP COLUMN proxy_implementation,
    DROP COLUMN internal_deployer, DROP COLUMN code_known;
