-- Between flows_close.sql and flows_close_end.sql: the close that sets the range's existing rows
-- to the rebuilt sums.
    ON CONFLICT (chain, token, hour, address) DO UPDATE SET
        in_usd = excluded.in_usd, in_value = excluded.in_value, out_usd = excluded.out_usd, out_value = excluded.out_value
