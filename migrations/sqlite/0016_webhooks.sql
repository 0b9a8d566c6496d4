-- Signed webhooks (docs/events.md, "Webhooks"). `webhooks` holds what the merchant's writer owns
-- (the record a read shows), the signing secrets (never read into the merchant's cached state)
-- and the dispatcher's state per endpoint: `cursor_seq`, the last event of the log it has
-- turned into deliveries, `next_attempt_at`, and the lease a replica holds while it delivers
-- (`lease_owner`, `lease_until`; claimed with FOR UPDATE SKIP LOCKED, so two replicas never
-- work on one endpoint at once).
CREATE TABLE webhooks (
    merchant_id           BIGINT NOT NULL REFERENCES merchants (id),
    id                    BIGINT NOT NULL,
    url                   TEXT NOT NULL,
    events                TEXT NOT NULL,
    active                BIGINT NOT NULL,
    description           TEXT,
    disabled_reason       TEXT,
    create_date           BIGINT NOT NULL,
    delete_date           BIGINT,
    secret                TEXT NOT NULL,
    previous_secret       TEXT,
    previous_secret_until BIGINT,
    cursor_seq            BIGINT NOT NULL,
    next_attempt_at       BIGINT NOT NULL DEFAULT 0,
    lease_owner           TEXT,
    lease_until           BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id)
);

-- One event for one endpoint, once attempted. `status`: pending (waiting for a retry or
-- resent), succeeded, or failed (given up).
CREATE TABLE webhook_deliveries (
    merchant_id      BIGINT NOT NULL,
    webhook_id       BIGINT NOT NULL,
    seq              BIGINT NOT NULL,
    event_type       TEXT NOT NULL,
    status           TEXT NOT NULL,
    attempts         BIGINT NOT NULL DEFAULT 0,
    created_at       BIGINT NOT NULL,
    next_attempt_at  BIGINT NOT NULL,
    first_attempt_at BIGINT,
    completed_at     BIGINT,
    PRIMARY KEY (merchant_id, webhook_id, seq),
    FOREIGN KEY (merchant_id, webhook_id) REFERENCES webhooks (merchant_id, id)
);

-- A delivery has a row once attempted; the log after `cursor_seq` is what has not been tried.
-- The dispatcher finds an endpoint's retries through the partial index (however long its
-- history), and pruning finds finished rows by age.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (merchant_id, webhook_id, seq)
    WHERE status = 'pending';
CREATE INDEX webhook_deliveries_done ON webhook_deliveries (completed_at);

CREATE TABLE webhook_attempts (
    merchant_id  BIGINT NOT NULL,
    webhook_id   BIGINT NOT NULL,
    seq          BIGINT NOT NULL,
    attempt      BIGINT NOT NULL,
    attempted_at BIGINT NOT NULL,
    status_code  BIGINT,
    duration_ms  BIGINT NOT NULL,
    response     TEXT,
    error        TEXT,
    PRIMARY KEY (merchant_id, webhook_id, seq, attempt),
    FOREIGN KEY (merchant_id, webhook_id, seq)
        REFERENCES webhook_deliveries (merchant_id, webhook_id, seq) ON DELETE CASCADE
);
