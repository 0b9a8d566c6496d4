-- Idempotency-Key: the answer of a write, stored in the write's own transaction, replayed for a
-- repeat of the same request (same fingerprint) within 24 hours. Keys are per merchant and
-- application; expired ones are pruned.
CREATE TABLE idempotency_keys (
    merchant_id    BIGINT NOT NULL REFERENCES merchants (id),
    application_id BIGINT NOT NULL,
    idem_key       TEXT NOT NULL,
    fingerprint    TEXT NOT NULL,
    answer         TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, application_id, idem_key)
);

CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
