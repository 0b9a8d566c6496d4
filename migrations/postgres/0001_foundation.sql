-- Foundation schema: the tables tenant manifests write.
-- Times are epoch milliseconds (UTC) in BIGINT columns on both databases, so range queries and
-- indexes behave identically on SQLite and PostgreSQL. Flags are BIGINT 0/1: sqlx's Any driver
-- cannot carry SQLite booleans.

-- One sequence hands out identifiers that are unique across all merchants.
CREATE SEQUENCE global_id_seq START WITH 1;

CREATE TABLE merchants (
    id          BIGINT PRIMARY KEY,
    manifest_key TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

CREATE TABLE stores (
    merchant_id   BIGINT NOT NULL REFERENCES merchants (id),
    id            BIGINT NOT NULL,
    manifest_key  TEXT,
    name          TEXT NOT NULL,
    address_line1 TEXT,
    address_line2 TEXT,
    address_line3 TEXT,
    city          TEXT,
    postcode      TEXT,
    country_id    TEXT,
    phone_number  TEXT,
    email         TEXT,
    lat           DOUBLE PRECISION,
    lng           DOUBLE PRECISION,
    timezone      TEXT NOT NULL DEFAULT 'Europe/London',
    sandbox       BIGINT NOT NULL DEFAULT 0,
    active_date   BIGINT,
    delete_date   BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    UNIQUE (merchant_id, manifest_key)
);

CREATE TABLE employees (
    merchant_id   BIGINT NOT NULL REFERENCES merchants (id),
    id            BIGINT NOT NULL,
    email         TEXT NOT NULL,
    first_name    TEXT,
    last_name     TEXT,
    role_id       BIGINT NOT NULL,
    password_hash TEXT,
    joined_date   BIGINT,
    exit_date     BIGINT,
    active_date   BIGINT,
    delete_date   BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    UNIQUE (merchant_id, email)
);
CREATE INDEX employees_email ON employees (email);

CREATE TABLE applications (
    merchant_id   BIGINT NOT NULL REFERENCES merchants (id),
    id            BIGINT NOT NULL,
    client_id     TEXT NOT NULL UNIQUE,
    secret_hash   TEXT NOT NULL,
    name          TEXT NOT NULL,
    description   TEXT,
    redirect_uris TEXT NOT NULL,
    logo          TEXT,
    active_date   BIGINT,
    delete_date   BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id)
);
