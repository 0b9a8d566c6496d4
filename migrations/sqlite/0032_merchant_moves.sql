-- Moves of merchants between databases (docs/operations.md, "From SQLite to PostgreSQL").
-- A move keeps every id, so a database takes merchants only while every id it holds came from
-- one source and it has handed out none of its own: this database's identity, which a target
-- records beside each merchant it takes, and those records.
CREATE TABLE database_identity (
    k  BIGINT PRIMARY KEY CHECK (k = 1),
    id TEXT NOT NULL
);

CREATE TABLE merchants_moved_in (
    merchant_id BIGINT PRIMARY KEY,
    -- The source's database_identity.
    source      TEXT NOT NULL,
    -- The last id the source had handed out: this database's allocator is past it.
    ids_through BIGINT NOT NULL,
    moved_at    BIGINT NOT NULL
);
