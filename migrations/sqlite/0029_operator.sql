-- The operator's realm (docs/operator.md): tokens of a hosting operator, which never work as a
-- merchant's, and a merchant's suspension (its tokens are refused, its data kept, its webhooks
-- paused). A token is kept as the SHA-256 of its text, as access tokens are.
CREATE TABLE operator_tokens (
    hash        TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);
ALTER TABLE merchants ADD COLUMN suspend_date BIGINT;
