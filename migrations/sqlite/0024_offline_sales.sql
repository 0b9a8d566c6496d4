-- Sales a till made offline (docs/offline.md): the till's UUID, the time of sale, its arrival,
-- the warnings it was recorded with and a digest of the body the till sent.
ALTER TABLE baskets ADD COLUMN client_id TEXT;
ALTER TABLE baskets ADD COLUMN occurred_at BIGINT;
ALTER TABLE baskets ADD COLUMN sync_date BIGINT;
ALTER TABLE baskets ADD COLUMN sync_warnings TEXT;
ALTER TABLE baskets ADD COLUMN client_digest TEXT;
-- A clientId is the sale's identity within the merchant: the database refuses a second one
-- even if the writer's own look-up were ever bypassed.
CREATE UNIQUE INDEX baskets_client ON baskets (merchant_id, client_id) WHERE client_id IS NOT NULL;
