-- +goose Up
-- A registry entry that is a wrapped or bridged copy of another coin (WETH of ETH, WBTC of BTC),
-- as the price API's wrapped-token categories say: the altcoin index leaves copies out, so a
-- coin is not counted twice and Bitcoin's own copy is not an altcoin that can beat it.
ALTER TABLE market.tokens ADD COLUMN wrapped boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE market.tokens DROP COLUMN wrapped;
