DELETE FROM balances.address_daily a
USING unnest($1::text[], $2::text[], $3::text[], $4::date[]) AS k(chain, address, token, day)
WHERE a.chain = k.chain AND a.address = k.address AND a.token = k.token AND a.day = k.day
