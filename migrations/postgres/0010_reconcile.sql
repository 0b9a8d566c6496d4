-- Stock counts (stock reconciliations). Completing a count stores, in one transaction with it,
-- the completed wastage basket its shortfall became and a surplus entry per product found over
-- the expected stock; stock_levels move by the count's own moves only.

CREATE TABLE stock_reconciliations (
    merchant_id       BIGINT NOT NULL REFERENCES merchants (id),
    id                BIGINT NOT NULL,
    store_id          BIGINT NOT NULL,
    note              TEXT,
    completed         BIGINT NOT NULL DEFAULT 0,
    complete_date     BIGINT,
    wastage_basket_id BIGINT,
    active_date       BIGINT,
    delete_date       BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, store_id) REFERENCES stores (merchant_id, id),
    FOREIGN KEY (merchant_id, wastage_basket_id) REFERENCES baskets (merchant_id, id)
);
CREATE INDEX stock_reconciliations_store_completed
    ON stock_reconciliations (merchant_id, store_id, complete_date);

-- Counted products, keyed by product id within their count. `expected` is set on completion.
CREATE TABLE stock_reconciliation_lines (
    merchant_id       BIGINT NOT NULL,
    reconciliation_id BIGINT NOT NULL,
    product_id        BIGINT NOT NULL,
    counted           BIGINT NOT NULL,
    cost_price        TEXT,
    vat_percentage    TEXT,
    note              TEXT,
    expected          BIGINT,
    PRIMARY KEY (merchant_id, reconciliation_id, product_id),
    FOREIGN KEY (merchant_id, reconciliation_id) REFERENCES stock_reconciliations (merchant_id, id)
);

-- Stock a count found over what was expected, received at the count's store.
CREATE TABLE stock_surplus_entries (
    merchant_id       BIGINT NOT NULL,
    id                BIGINT NOT NULL,
    reconciliation_id BIGINT NOT NULL,
    store_id          BIGINT NOT NULL,
    product_id        BIGINT NOT NULL,
    quantity          BIGINT NOT NULL,
    entry_date        BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, reconciliation_id) REFERENCES stock_reconciliations (merchant_id, id)
);
CREATE INDEX stock_surplus_entries_count ON stock_surplus_entries (merchant_id, reconciliation_id);

-- The basket report over every store reads completed baskets by completion time alone
-- (with storeIds it uses baskets_store_completed).
CREATE INDEX baskets_completed ON baskets (merchant_id, complete_date);
