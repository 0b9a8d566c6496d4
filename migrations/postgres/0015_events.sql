-- The change-event log (transactional outbox): every committed write appends its events in the
-- same transaction. `seq` numbers a merchant's events, only increasing (the merchant's writer,
-- which holds the merchant, numbers them after the last it knows); `events_pruned_through` is
-- the last one retention removed (a delta read from before it cannot be answered, and the
-- numbering goes on after it when every event was pruned).
ALTER TABLE merchants ADD COLUMN events_pruned_through BIGINT NOT NULL DEFAULT 0;

CREATE TABLE events (
    merchant_id BIGINT NOT NULL REFERENCES merchants (id),
    seq         BIGINT NOT NULL,
    event_type  TEXT NOT NULL,
    object_id   BIGINT NOT NULL,
    occurred_at BIGINT NOT NULL,
    data        TEXT NOT NULL,
    PRIMARY KEY (merchant_id, seq)
);

CREATE INDEX events_age ON events (occurred_at);
