-- Creates the user's ($1) entities from the parallel arrays of names ($2), notes ($3) and
-- shareable flags ($4), in array order, and returns them in that order: seq, which orders a
-- user's entities, is drawn as the rows are inserted.
WITH q AS (
    SELECT * FROM unnest($2::text[], $3::text[], $4::boolean[]) WITH ORDINALITY AS q(name, note, shareable, ord)
), ins AS (
    INSERT INTO userdata.entities (user_id, name, note, shareable)
    SELECT $1, name, note, shareable FROM q ORDER BY ord
    RETURNING id, seq, name, note, shareable, created_at, updated_at
)
SELECT id::text, name, note, shareable, created_at, updated_at FROM ins ORDER BY seq
