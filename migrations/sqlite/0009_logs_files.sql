-- Logs: a small JSON document store for applications, filed under an object key. The log id is
-- text, "<object>-<identifier>:<n>", with n counted per merchant in log_counters (incremented in
-- the same transaction as the insert). Rows are keyed by (merchant_id, log_id): another
-- merchant's log id is an id that does not exist.

CREATE TABLE log_counters (
    merchant_id BIGINT PRIMARY KEY REFERENCES merchants (id),
    last_n      BIGINT NOT NULL
);

CREATE TABLE logs (
    merchant_id   BIGINT NOT NULL REFERENCES merchants (id),
    log_id        TEXT NOT NULL,
    n             BIGINT NOT NULL,
    object        TEXT NOT NULL,
    identifier    TEXT NOT NULL,
    tags          TEXT NOT NULL,
    data          TEXT NOT NULL,
    added_date    BIGINT NOT NULL,
    complete_date BIGINT,
    updated_at    BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, log_id)
);

CREATE INDEX logs_by_object ON logs (merchant_id, object, identifier, n);

-- Uploaded images, content-addressed: the SHA-256 of the bytes is the key, so the same bytes are
-- stored once whoever uploads them. merchant_id is the first uploader, kept for accounting.
-- SQLite keeps the bytes as BLOB, PostgreSQL as BYTEA (both are sqlx Any's blob).

CREATE TABLE files (
    sha256       TEXT PRIMARY KEY,
    file_name    TEXT NOT NULL UNIQUE,
    content_type TEXT NOT NULL,
    size         BIGINT NOT NULL,
    data         BLOB NOT NULL,
    merchant_id  BIGINT NOT NULL REFERENCES merchants (id),
    purpose      TEXT,
    created_at   BIGINT NOT NULL
);

CREATE INDEX files_by_merchant ON files (merchant_id);
