-- Payments and basket lines a till made under its own id (docs/offline.md). A payment keeps the
-- till's UUID, when it was taken and a digest of the body it was made from; a line, the UUID
-- that finds it again within its basket.
ALTER TABLE transactions ADD COLUMN client_id TEXT;
ALTER TABLE transactions ADD COLUMN occurred_at BIGINT;
ALTER TABLE transactions ADD COLUMN client_digest TEXT;
CREATE UNIQUE INDEX transactions_client ON transactions (merchant_id, client_id)
    WHERE client_id IS NOT NULL;
ALTER TABLE basket_lines ADD COLUMN client_id TEXT;
