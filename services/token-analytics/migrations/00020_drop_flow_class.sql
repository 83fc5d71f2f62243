-- +goose Up
-- market.flow_class, the class rule before deposit addresses (migration 00019), is named by no
-- statement of this release nor of the previous one (which classifies with market.address_class);
-- the statements that named it also named address_classes.entity_type, renamed by 00019, so
-- replicas that still carry them fail on that column with or without the function.
DROP FUNCTION market.flow_class(text, boolean);

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION market.flow_class(entity_type text, is_pool boolean) RETURNS text
IMMUTABLE LANGUAGE sql AS $$
    SELECT CASE WHEN entity_type = 'cex' THEN 'cex' WHEN entity_type = 'dex' OR is_pool THEN 'dex' END
$$;
-- +goose StatementEnd
