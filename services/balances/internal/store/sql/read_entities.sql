SELECT id, name, type, note, service, website, twitter, linkedin, description, populated_tags::text
FROM balances.entities WHERE id = ANY($1::text[])
