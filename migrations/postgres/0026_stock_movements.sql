-- The stock ledger (docs/offline.md, "The stock ledger"): every movement of a product's stock at
-- a store, with when it happened (a sale's time of sale) and when it arrived. The level at any
-- time is the sum of the movements before it.
CREATE TABLE stock_movements (
    merchant_id BIGINT NOT NULL REFERENCES merchants (id),
    store_id    BIGINT NOT NULL,
    product_id  BIGINT NOT NULL,
    occurred_at BIGINT NOT NULL,
    arrived_at  BIGINT NOT NULL,
    reason      TEXT   NOT NULL,
    source_id   BIGINT NOT NULL,
    quantity    BIGINT NOT NULL
);
CREATE INDEX stock_movements_by_product
    ON stock_movements (merchant_id, product_id, occurred_at);
-- The levels held when the ledger began are its opening movements, at the epoch.
INSERT INTO stock_movements
    SELECT merchant_id, store_id, product_id, 0, 0, 'opening', 0, total_stock - stock_sold
    FROM stock_levels WHERE total_stock <> 0 OR stock_sold <> 0;
