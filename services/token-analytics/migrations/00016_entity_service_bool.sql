-- +goose Up
-- An entity's service is the public shape's nullable boolean (libs/render.Service): true when
-- the operator names a service, else null. Attributions stored before held the service's id
-- string; the readers accept it, and this rewrites it so the stored rows hold the shape they
-- answer with. A row an older replica writes during the rolling upgrade is read the same.
UPDATE market.address_classes
SET info = jsonb_set(info, '{entity,service}',
    CASE WHEN info #>> '{entity,service}' <> '' THEN 'true'::jsonb ELSE 'null'::jsonb END)
WHERE jsonb_typeof(info #> '{entity,service}') = 'string';
UPDATE market.address_classes
SET info = jsonb_set(info, '{predictedEntity,service}',
    CASE WHEN info #>> '{predictedEntity,service}' <> '' THEN 'true'::jsonb ELSE 'null'::jsonb END)
WHERE jsonb_typeof(info #> '{predictedEntity,service}') = 'string';

-- +goose Down
-- Nothing: the service ids are not kept, and the boolean is what every reader since accepts.
SELECT 1;
