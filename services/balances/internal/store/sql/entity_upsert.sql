-- Details of a version lower than the stored one are older than what is stored and change
-- nothing; version 0 (publishers predating Entity.version) replaces only unversioned details.
INSERT INTO balances.entities AS e (id, name, type, note, service, website, twitter, linkedin, description, populated_tags, version)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::jsonb[], $11::bigint[])
ON CONFLICT (id) DO UPDATE
  SET name = excluded.name, type = excluded.type, note = excluded.note, service = excluded.service,
      website = excluded.website, twitter = excluded.twitter, linkedin = excluded.linkedin,
      description = excluded.description, populated_tags = excluded.populated_tags, version = excluded.version
  WHERE excluded.version >= e.version
    AND (e.name, e.type, e.note, e.service, e.website, e.twitter, e.linkedin, e.description, e.populated_tags, e.version) IS DISTINCT FROM
        (excluded.name, excluded.type, excluded.note, excluded.service, excluded.website, excluded.twitter, excluded.linkedin,
         excluded.description, excluded.populated_tags, excluded.version)
