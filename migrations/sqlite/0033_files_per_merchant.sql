-- Uploaded files are kept per merchant (docs/operator.md, "Deleting"): the same bytes uploaded
-- by two merchants are two rows under one name (content-addressed, so either serves it), each
-- merchant's own. Before, the first uploader's row served both, and deleting or moving that
-- merchant took the file from the other. SQLite cannot change a primary key: the table is
-- made again, its rows (each its first uploader's) copied.
CREATE TABLE files_per_merchant (
    sha256       TEXT NOT NULL,
    file_name    TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size         BIGINT NOT NULL,
    data         BLOB NOT NULL,
    merchant_id  BIGINT NOT NULL REFERENCES merchants (id),
    purpose      TEXT,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, sha256)
);
INSERT INTO files_per_merchant
    (sha256, file_name, content_type, size, data, merchant_id, purpose, created_at)
SELECT sha256, file_name, content_type, size, data, merchant_id, purpose, created_at FROM files;
DROP TABLE files;
ALTER TABLE files_per_merchant RENAME TO files;
CREATE INDEX files_by_name ON files (file_name);
