-- Pods (docs/operations.md, "Pods"): several databases, each holding whole merchants.
-- The home database (`database_url`) keeps the directory: which pod holds each merchant
-- placed outside it (a merchant without a row here lives in the home database).
CREATE TABLE merchant_placements (
    merchant_id  BIGINT PRIMARY KEY,
    merchant_key TEXT NOT NULL UNIQUE,
    pod          TEXT NOT NULL,
    placed_at    BIGINT NOT NULL
);

-- Set on a merchant's row in the pod it left, in the same transaction that ends the move's
-- write hold: a write that waited on the hold finds the pod it must go to instead.
ALTER TABLE merchants ADD COLUMN moved_to TEXT;

-- Set by a move on each endpoint of the merchant it is about to hold: no dispatcher claims the
-- endpoint, and one delivering to it records what it sent and gives it back.
ALTER TABLE webhooks ADD COLUMN paused_by TEXT;
