-- +goose Up
-- What intel.attributions.v1 says of an entity beyond its name: its description and the tags
-- /balances/entity shows with it (populatedTags, as JSON in the API's order).
ALTER TABLE balances.entities
  ADD COLUMN description    text  NOT NULL DEFAULT '',
  ADD COLUMN populated_tags jsonb NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE balances.entities DROP COLUMN description, DROP COLUMN populated_tags;
