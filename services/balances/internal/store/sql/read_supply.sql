SELECT supply::text FROM balances.token_supply WHERE chain = $1 AND token = $2
