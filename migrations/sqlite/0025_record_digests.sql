-- Reconciliation digests (docs/digest.md): each record's last change sequence and the hash of
-- (object, id, sequence), kept by the transaction that appends the change's events. A record
-- enters at its first change after this migration.
CREATE TABLE record_digests (
    merchant_id BIGINT NOT NULL REFERENCES merchants (id),
    object      TEXT   NOT NULL,
    id          BIGINT NOT NULL,
    seq         BIGINT NOT NULL,
    h           BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, object, id)
) WITHOUT ROWID;
