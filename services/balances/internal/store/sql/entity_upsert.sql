INSERT INTO balances.entities AS e (id, name, type, note, service, website, twitter, linkedin, description, populated_tags)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::jsonb[])
ON CONFLICT (id) DO UPDATE
  SET name = excluded.name, type = excluded.type, note = excluded.note, service = excluded.service,
      website = excluded.website, twitter = excluded.twitter, linkedin = excluded.linkedin,
      description = excluded.description, populated_tags = excluded.populated_tags
  WHERE (e.name, e.type, e.note, e.service, e.website, e.twitter, e.linkedin, e.description, e.populated_tags) IS DISTINCT FROM
        (excluded.name, excluded.type, excluded.note, excluded.service, excluded.website, excluded.twitter, excluded.linkedin,
         excluded.description, excluded.populated_tags)
