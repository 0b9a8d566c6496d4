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
-- Per thousand ids, the records and Σ hash, kept by triggers as record_digests changes, so a
-- digest by 1,000 ids or more reads a row per thousand records instead of every record.
CREATE TABLE digest_buckets (
    merchant_id BIGINT NOT NULL REFERENCES merchants (id),
    object      TEXT   NOT NULL,
    bucket      BIGINT NOT NULL,
    records     BIGINT NOT NULL,
    total       BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, object, bucket)
) WITHOUT ROWID;
CREATE TRIGGER record_digests_added AFTER INSERT ON record_digests BEGIN
    INSERT INTO digest_buckets (merchant_id, object, bucket, records, total)
    VALUES (NEW.merchant_id, NEW.object, NEW.id / 1000, 1, NEW.h)
    ON CONFLICT (merchant_id, object, bucket)
    DO UPDATE SET records = records + 1, total = total + excluded.total;
END;
CREATE TRIGGER record_digests_changed AFTER UPDATE ON record_digests BEGIN
    UPDATE digest_buckets SET total = total - OLD.h + NEW.h
    WHERE merchant_id = NEW.merchant_id AND object = NEW.object AND bucket = NEW.id / 1000;
END;
