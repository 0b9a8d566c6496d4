-- Till sessions (docs/tills.md): a register's day from the float to the counted close, the
-- cash paid in and out during it, and the till facts a basket takes at completion.
CREATE TABLE register_sessions (
    merchant_id           BIGINT NOT NULL REFERENCES merchants (id),
    id                    BIGINT NOT NULL,
    register_id           BIGINT NOT NULL,
    store_id              BIGINT NOT NULL,
    employee_id           BIGINT,
    opening_float         BIGINT NOT NULL,
    closed                BIGINT NOT NULL DEFAULT 0,
    counted_cash          BIGINT,
    counted_denominations TEXT,
    expected_cash         BIGINT,
    difference            BIGINT,
    first_receipt_number  BIGINT NOT NULL,
    last_receipt_number   BIGINT,
    closed_by             BIGINT,
    close_date            BIGINT,
    figures               TEXT,
    active_date           BIGINT,
    delete_date           BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, register_id) REFERENCES registers (merchant_id, id)
);
CREATE TABLE cash_movements (
    merchant_id BIGINT NOT NULL REFERENCES merchants (id),
    id          BIGINT NOT NULL,
    session_id  BIGINT NOT NULL,
    movement_type TEXT NOT NULL,
    amount      BIGINT NOT NULL,
    reason      TEXT NOT NULL,
    employee_id BIGINT,
    active_date BIGINT,
    delete_date BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, session_id) REFERENCES register_sessions (merchant_id, id)
);
ALTER TABLE baskets ADD COLUMN register_id BIGINT;
ALTER TABLE baskets ADD COLUMN session_id BIGINT;
ALTER TABLE baskets ADD COLUMN employee_id BIGINT;
ALTER TABLE baskets ADD COLUMN receipt_number BIGINT;
-- Gap-free numbering's last guard: no register ever gives a number twice. Partial, like the
-- session indexes: a basket sold at no till costs its write no index entry.
CREATE UNIQUE INDEX baskets_receipt ON baskets (merchant_id, register_id, receipt_number)
    WHERE receipt_number IS NOT NULL;
-- A session's sales (its figures at activation, `GET /basket` with `sessionIds`).
CREATE INDEX baskets_session ON baskets (merchant_id, session_id) WHERE session_id IS NOT NULL;

-- Sales running totals (docs/sales-report.md): each completing transaction adds its sale to
-- the rows of its store's local day and hour; `GET /report/sales` sums a range of them.
CREATE TABLE sales_totals (
    merchant_id BIGINT NOT NULL REFERENCES merchants (id),
    hourly      BIGINT NOT NULL,
    dimension   TEXT NOT NULL,
    bucket      BIGINT NOT NULL,
    store_id    BIGINT NOT NULL,
    item        TEXT NOT NULL,
    register_id BIGINT NOT NULL,
    employee_id BIGINT NOT NULL,
    count       BIGINT NOT NULL,
    quantity    BIGINT NOT NULL,
    amount      BIGINT NOT NULL,
    tax         BIGINT NOT NULL,
    discount    BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, hourly, dimension, bucket, store_id, item, register_id, employee_id)
);

-- An order names the customer it is for (the basket's by default).
ALTER TABLE orders ADD COLUMN customer_id BIGINT;
CREATE INDEX orders_customer ON orders (merchant_id, customer_id) WHERE customer_id IS NOT NULL;

-- A payment's till: its basket's register, the session open there, who took it.
ALTER TABLE transactions ADD COLUMN register_id BIGINT;
ALTER TABLE transactions ADD COLUMN session_id BIGINT;
ALTER TABLE transactions ADD COLUMN employee_id BIGINT;
CREATE INDEX transactions_session ON transactions (merchant_id, session_id)
    WHERE session_id IS NOT NULL;
