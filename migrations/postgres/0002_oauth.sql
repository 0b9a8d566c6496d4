-- OAuth state. Codes and tokens are stored only as SHA-256 hashes (hex). Used codes and refresh
-- tokens stay as tombstones until expiry plus a margin: the link from a used credential to what it
-- produced is what makes reuse detection and family revocation possible.

-- A family is everything issued from one authorization: the code, every access token and every
-- generation of refresh token. Revoking the family kills all of them at once.
CREATE TABLE oauth_families (
    id             TEXT PRIMARY KEY,
    merchant_id    BIGINT NOT NULL REFERENCES merchants (id),
    employee_id    BIGINT NOT NULL,
    application_id BIGINT NOT NULL,
    scope          TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    revoked_at     BIGINT
);
CREATE INDEX oauth_families_employee ON oauth_families (merchant_id, employee_id);
CREATE INDEX oauth_families_application ON oauth_families (application_id);

CREATE TABLE oauth_codes (
    hash           TEXT PRIMARY KEY,
    family_id      TEXT NOT NULL REFERENCES oauth_families (id),
    redirect_uri   TEXT NOT NULL,
    code_challenge TEXT,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    used_at        BIGINT
);

CREATE TABLE access_tokens (
    hash           TEXT PRIMARY KEY,
    family_id      TEXT NOT NULL REFERENCES oauth_families (id),
    merchant_id    BIGINT NOT NULL,
    employee_id    BIGINT NOT NULL,
    application_id BIGINT NOT NULL,
    scope          TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    revoked_at     BIGINT
);
CREATE INDEX access_tokens_family ON access_tokens (family_id);

CREATE TABLE refresh_tokens (
    hash             TEXT PRIMARY KEY,
    family_id        TEXT NOT NULL REFERENCES oauth_families (id),
    created_at       BIGINT NOT NULL,
    expires_at       BIGINT NOT NULL,
    used_at          BIGINT,
    -- The successor pair, sealed (AEAD) under a key derived from this refresh token itself, so a
    -- retry of this token inside the grace can get the same pair back while the database holds
    -- nothing that would let anyone else read it.
    successor_sealed TEXT
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

-- A signed-in browser between the sign-in and the consent page (cookie `mcd_session`, hashed).
-- Kept in the database so the two pages may be served by different replicas.
CREATE TABLE oauth_sessions (
    hash        TEXT PRIMARY KEY,
    merchant_id BIGINT NOT NULL REFERENCES merchants (id),
    employee_id BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
