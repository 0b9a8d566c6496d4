-- Sales: baskets and their lines, payments, orders, invoices and their items. A completed
-- record never changes; completing a basket or an invoice moves stock_levels in the same
-- transaction. Money is decimal text; quantities and transaction amounts are whole numbers.

CREATE TABLE baskets (
    merchant_id   BIGINT NOT NULL REFERENCES merchants (id),
    id            BIGINT NOT NULL,
    store_id      BIGINT NOT NULL,
    name          TEXT,
    note          TEXT,
    basket_type   TEXT NOT NULL,
    total         TEXT NOT NULL,
    total_tax     TEXT NOT NULL,
    completed     BIGINT NOT NULL DEFAULT 0,
    complete_date BIGINT,
    active_date   BIGINT,
    delete_date   BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, store_id) REFERENCES stores (merchant_id, id)
);
-- The basket report reads completed baskets by store and completion time.
CREATE INDEX baskets_store_completed ON baskets (merchant_id, store_id, complete_date);

CREATE TABLE basket_lines (
    merchant_id         BIGINT NOT NULL,
    id                  BIGINT NOT NULL,
    basket_id           BIGINT NOT NULL,
    product_id          BIGINT NOT NULL,
    product_instance_id BIGINT NOT NULL,
    quantity            BIGINT NOT NULL,
    price               TEXT NOT NULL,
    original_price      TEXT NOT NULL,
    tax_percentage      TEXT NOT NULL,
    note                TEXT,
    added_date          BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, basket_id) REFERENCES baskets (merchant_id, id)
);
CREATE INDEX basket_lines_basket ON basket_lines (merchant_id, basket_id);

CREATE TABLE transactions (
    merchant_id   BIGINT NOT NULL REFERENCES merchants (id),
    id            BIGINT NOT NULL,
    basket_id     BIGINT NOT NULL,
    payment_type  TEXT NOT NULL,
    amount        BIGINT NOT NULL,
    tip           BIGINT NOT NULL DEFAULT 0,
    note          TEXT,
    completed     BIGINT NOT NULL DEFAULT 0,
    complete_date BIGINT,
    active_date   BIGINT,
    delete_date   BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, basket_id) REFERENCES baskets (merchant_id, id)
);
CREATE INDEX transactions_basket ON transactions (merchant_id, basket_id);

CREATE TABLE orders (
    merchant_id      BIGINT NOT NULL REFERENCES merchants (id),
    id               BIGINT NOT NULL,
    basket_id        BIGINT NOT NULL,
    store_id         BIGINT NOT NULL,
    fulfilment       TEXT NOT NULL,
    customer_name    TEXT,
    customer_email   TEXT,
    customer_phone   TEXT,
    delivery_address TEXT,
    table_number     TEXT,
    due_date         BIGINT,
    note             TEXT,
    status           TEXT NOT NULL,
    complete_date    BIGINT,
    active_date      BIGINT,
    delete_date      BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, basket_id) REFERENCES baskets (merchant_id, id)
);

CREATE TABLE invoices (
    merchant_id       BIGINT NOT NULL REFERENCES merchants (id),
    id                BIGINT NOT NULL,
    store_id          BIGINT NOT NULL,
    supplier_id       BIGINT NOT NULL,
    supplier_store_id BIGINT,
    reference         TEXT,
    note              TEXT,
    invoice_date      BIGINT,
    completed         BIGINT NOT NULL DEFAULT 0,
    complete_date     BIGINT,
    active_date       BIGINT,
    delete_date       BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, store_id) REFERENCES stores (merchant_id, id)
);

CREATE TABLE invoice_items (
    merchant_id    BIGINT NOT NULL,
    id             BIGINT NOT NULL,
    invoice_id     BIGINT NOT NULL,
    product_id     BIGINT NOT NULL,
    quantity       BIGINT NOT NULL,
    unit_price     TEXT NOT NULL,
    vat_percentage TEXT NOT NULL,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, invoice_id) REFERENCES invoices (merchant_id, id)
);
CREATE INDEX invoice_items_invoice ON invoice_items (merchant_id, invoice_id);
