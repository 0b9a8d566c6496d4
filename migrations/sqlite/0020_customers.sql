-- Customers (docs/customers.md): who bought. A basket may name one.
CREATE TABLE customers (
    merchant_id       BIGINT NOT NULL REFERENCES merchants (id),
    id                BIGINT NOT NULL,
    name              TEXT NOT NULL,
    email             TEXT,
    phone             TEXT,
    note              TEXT,
    marketing_consent BIGINT NOT NULL DEFAULT 0,
    attributes        TEXT,
    active_date       BIGINT,
    delete_date       BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id)
);
ALTER TABLE baskets ADD COLUMN customer_id BIGINT;
-- A customer's purchase history (`GET /basket` with `customerIds`) reads this index.
CREATE INDEX baskets_customer ON baskets (merchant_id, customer_id);
