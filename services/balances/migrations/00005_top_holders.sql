-- +goose Up
-- Top holders per (chain, token), kept beside current by statement-level triggers on current, so
-- current needs no index on balance and an update of a balance is a HOT update.
--
-- Holders rank by balance, largest first, ties by address. top_holders holds at least the top of
-- each token: top_floor names a rank (balance, address) that no holder outside top_holders ranks
-- above (no row: every holder is a member), so the members ranked above the floor are exactly
-- the token's first holders. When a token has more than 2,000 members the lowest leave and the
-- floor rises to the highest of them; when fewer than 1,000 members stay above the floor (top
-- holders sold), the token is refilled from current with a scan of current. /token/holders reads
-- at most 1,000 deep.
CREATE TABLE balances.top_holders (
  chain   text NOT NULL,
  token   text NOT NULL,
  address text NOT NULL,
  balance numeric(78,0) NOT NULL,
  PRIMARY KEY (chain, token, address)
);
CREATE INDEX top_holders_rank ON balances.top_holders (chain, token, balance DESC, address);

CREATE TABLE balances.top_floor (
  chain   text NOT NULL,
  token   text NOT NULL,
  balance numeric(78,0) NOT NULL,
  address text NOT NULL,
  PRIMARY KEY (chain, token)
);

-- +goose StatementBegin
-- refill_top_holders rebuilds one token's top holders from current: the 2,000 first, the floor
-- being the 2,001st (none: every holder is a member).
CREATE FUNCTION balances.refill_top_holders(p_chain text, p_token text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM balances.top_holders WHERE chain = p_chain AND token = p_token;
  DELETE FROM balances.top_floor WHERE chain = p_chain AND token = p_token;
  WITH ranked AS (
    SELECT address, balance, row_number() OVER (ORDER BY balance DESC, address) AS n FROM (
      SELECT address, balance FROM balances.current
      WHERE chain = p_chain AND token = p_token AND balance > 0
      ORDER BY balance DESC, address LIMIT 2001
    ) x
  ), members AS (
    INSERT INTO balances.top_holders (chain, token, address, balance)
    SELECT p_chain, p_token, address, balance FROM ranked WHERE n <= 2000
  )
  INSERT INTO balances.top_floor (chain, token, balance, address)
  SELECT p_chain, p_token, balance, address FROM ranked WHERE n = 2001;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
-- sync_top_holders folds one statement's changed current rows that matter (changed_rows: chain,
-- address, token, balance, 0 for a deleted row; members and rows ranked above the floor) into
-- top_holders: members follow their balance (and leave at 0), others join; then tokens over 2,000 members are trimmed
-- and tokens with fewer than 1,000 members above the floor refilled.
CREATE FUNCTION balances.sync_top_holders() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  added bigint;
  changed bigint;
BEGIN
  DELETE FROM balances.top_holders t USING changed_rows c
  WHERE c.balance = 0 AND t.chain = c.chain AND t.token = c.token AND t.address = c.address;
  WITH up AS (
    INSERT INTO balances.top_holders AS t (chain, token, address, balance)
    SELECT c.chain, c.token, c.address, c.balance FROM changed_rows c WHERE c.balance > 0
    ON CONFLICT (chain, token, address) DO UPDATE SET balance = excluded.balance
    RETURNING (xmax = 0) AS inserted
  )
  SELECT count(*) FILTER (WHERE inserted) INTO added FROM up;
  SELECT count(*) INTO changed FROM changed_rows;
  -- Only new members can take a token over 2,000, and only members that fell or left can leave
  -- fewer than 1,000 above its floor.
  IF added > 0 THEN
  WITH gone AS (
    -- By tuple id: a join with the ranked rows lets the planner rank once per member.
    DELETE FROM balances.top_holders WHERE ctid = ANY (ARRAY (
      SELECT x.ctid FROM (SELECT DISTINCT chain, token FROM changed_rows) toks
      CROSS JOIN LATERAL (
        SELECT m.ctid FROM balances.top_holders m
        WHERE m.chain = toks.chain AND m.token = toks.token
        ORDER BY m.balance DESC, m.address OFFSET 2000
      ) x))
    RETURNING chain, token, balance, address
  ), top AS (
    SELECT DISTINCT ON (chain, token) chain, token, balance, address FROM gone ORDER BY chain, token, balance DESC, address
  )
  INSERT INTO balances.top_floor AS f (chain, token, balance, address)
  SELECT chain, token, balance, address FROM top
  ON CONFLICT (chain, token) DO UPDATE SET balance = excluded.balance, address = excluded.address
    WHERE excluded.balance > f.balance OR (excluded.balance = f.balance AND excluded.address < f.address);
  END IF;
  IF changed > added THEN
  PERFORM balances.refill_top_holders(f.chain, f.token)
  FROM balances.top_floor f
  WHERE (f.chain, f.token) IN (SELECT chain, token FROM changed_rows)
    AND (SELECT count(*) FROM (SELECT 1 FROM balances.top_holders m
         WHERE m.chain = f.chain AND m.token = f.token
           AND (m.balance > f.balance OR (m.balance = f.balance AND m.address < f.address)) LIMIT 1000) x) < 1000;
  END IF;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
-- current_changed collects the rows a statement on current changed that can move its token's top
-- holders (members, and others ranking above the floor; most rows of a big token are neither)
-- and folds them in.
CREATE FUNCTION balances.current_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  CREATE TEMP TABLE IF NOT EXISTS changed_rows (chain text, address text, token text, balance numeric(78,0))
    ON COMMIT DELETE ROWS;
  DELETE FROM changed_rows;
  IF TG_OP = 'DELETE' THEN
    INSERT INTO changed_rows SELECT chain, address, token, 0 FROM old_rows o
    WHERE EXISTS (SELECT 1 FROM balances.top_holders m WHERE m.chain = o.chain AND m.token = o.token AND m.address = o.address);
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO changed_rows SELECT n.chain, n.address, n.token, n.balance FROM new_rows n
    JOIN old_rows o ON o.chain = n.chain AND o.address = n.address AND o.token = n.token
    LEFT JOIN balances.top_floor f ON f.chain = n.chain AND f.token = n.token
    WHERE o.balance <> n.balance
      AND (f.chain IS NULL OR n.balance > f.balance OR (n.balance = f.balance AND n.address < f.address)
        OR EXISTS (SELECT 1 FROM balances.top_holders m WHERE m.chain = n.chain AND m.token = n.token AND m.address = n.address));
  ELSE
    INSERT INTO changed_rows SELECT n.chain, n.address, n.token, n.balance FROM new_rows n
    LEFT JOIN balances.top_floor f ON f.chain = n.chain AND f.token = n.token
    WHERE n.balance > 0 AND (f.chain IS NULL OR n.balance > f.balance OR (n.balance = f.balance AND n.address < f.address));
  END IF;
  IF FOUND THEN
    PERFORM balances.sync_top_holders();
  END IF;
  RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER current_top_insert AFTER INSERT ON balances.current
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION balances.current_changed();
CREATE TRIGGER current_top_update AFTER UPDATE ON balances.current
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION balances.current_changed();
CREATE TRIGGER current_top_delete AFTER DELETE ON balances.current
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION balances.current_changed();

SELECT balances.refill_top_holders(chain, token) FROM (SELECT DISTINCT chain, token FROM balances.current) t;

DROP INDEX balances.current_holders;
ALTER TABLE balances.current SET (fillfactor = 80);

-- +goose Down
DROP TRIGGER current_top_insert ON balances.current;
DROP TRIGGER current_top_update ON balances.current;
DROP TRIGGER current_top_delete ON balances.current;
DROP FUNCTION balances.current_changed(), balances.sync_top_holders(), balances.refill_top_holders(text, text);
DROP TABLE balances.top_holders, balances.top_floor;
CREATE INDEX current_holders ON balances.current (chain, token, balance DESC) WHERE balance > 0;
ALTER TABLE balances.current RESET (fillfactor);
