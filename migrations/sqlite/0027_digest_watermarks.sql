-- Digests are kept from the event log when they are read (docs/digest.md), not by the write
-- that appends the events: how far each merchant's record_digests has followed its log.
-- Starting at 0, the first digest also takes in every record changed since the log began.
CREATE TABLE digest_watermarks (
    merchant_id BIGINT PRIMARY KEY REFERENCES merchants (id),
    seq         BIGINT NOT NULL
);
