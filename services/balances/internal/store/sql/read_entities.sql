SELECT id, name, type, note, service, website, twitter, linkedin FROM balances.entities WHERE id = ANY($1::text[])
