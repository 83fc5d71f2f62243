-- The addresses of apply_rows.
SELECT from_addr FROM apply_rows UNION SELECT to_addr FROM apply_rows
