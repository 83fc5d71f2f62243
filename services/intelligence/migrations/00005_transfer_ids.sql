-- +goose Up
-- A transfer is counted once by its natural id (chain, id), whatever block carries it
-- (docs/intelligence.md, "Reorgs"). transfer_ids holds the ids of the transfers counted, as a
-- hash (md5 of "<octets of chain>:<chain>|<id>", store.transferNID); displaced_facts the
-- transfers whose id another block's transfer holds: counted only when a reorg orphans that
-- block, kept as long as the block journal.
CREATE TABLE intel.transfer_ids (nid uuid PRIMARY KEY);
INSERT INTO intel.transfer_ids
SELECT DISTINCT md5(octet_length(b.chain) || ':' || b.chain || '|' || i.id)::uuid
FROM intel.block_facts b CROSS JOIN LATERAL unnest(b.ids) i(id)
WHERE NOT b.orphaned AND i.id <> '';

CREATE TABLE intel.displaced_facts (
    chain      text   NOT NULL,
    id         text   NOT NULL,
    block_hash text   NOT NULL,
    chain_type text   NOT NULL,
    ms         bigint NOT NULL,
    from_addr  text   NOT NULL,
    to_addr    text   NOT NULL,
    usd        double precision NOT NULL,
    PRIMARY KEY (chain, id, block_hash)
);
CREATE INDEX displaced_facts_age ON intel.displaced_facts (chain, ms);

-- +goose Down
DROP TABLE intel.transfer_ids, intel.displaced_facts;
