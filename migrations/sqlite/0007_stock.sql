-- Stock per store and product, owned by that store's StoreActor. Units received (invoices and
-- stock-count surplus) and units that left in completed baskets (wastage included).
CREATE TABLE stock_levels (
    merchant_id BIGINT NOT NULL REFERENCES merchants (id),
    store_id    BIGINT NOT NULL,
    product_id  BIGINT NOT NULL,
    total_stock BIGINT NOT NULL DEFAULT 0,
    stock_sold  BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, store_id, product_id),
    FOREIGN KEY (merchant_id, store_id) REFERENCES stores (merchant_id, id)
);
