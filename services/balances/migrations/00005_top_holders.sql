-- +goose Up
-- /token/holders reads at most 1,000 deep, so current needs no index on balance: top_holders
-- holds, per (chain, token), every holder whose balance is at least the token's floor
-- (top_floor; no row: 0, every holder), and the writers keep between 1,000 and 3,000 rows per
-- token above a floor (trimmed back to the 2,000 largest, refilled from current when fewer than
-- 1,000 are left). A balance update of a holder below the floor writes no index entry for its
-- balance, and current's updates can be HOT (its indexed columns do not change; fillfactor
-- leaves the room on the page).
DROP INDEX balances.current_holders;
ALTER TABLE balances.current SET (fillfactor = 90);

CREATE TABLE balances.top_holders (
  chain   text NOT NULL,
  token   text NOT NULL,
  address text NOT NULL,
  balance numeric(78,0) NOT NULL,
  PRIMARY KEY (chain, token, address)
);
CREATE INDEX top_holders_rank ON balances.top_holders (chain, token, balance DESC, address);

CREATE TABLE balances.top_floor (
  chain text NOT NULL,
  token text NOT NULL,
  floor numeric(78,0) NOT NULL,
  PRIMARY KEY (chain, token)
);

INSERT INTO balances.top_holders (chain, token, address, balance)
SELECT chain, token, address, balance FROM balances.current WHERE balance > 0;

-- +goose Down
DROP TABLE balances.top_floor, balances.top_holders;
ALTER TABLE balances.current RESET (fillfactor);
CREATE INDEX current_holders ON balances.current (chain, token, balance DESC) WHERE balance > 0;
