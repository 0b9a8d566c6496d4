-- Products and their price instances. Instances are never edited: a price change drops the old
-- instance (delete_date) and adds a new one, so baskets keep pointing at what they sold.

CREATE TABLE products (
    merchant_id  BIGINT NOT NULL REFERENCES merchants (id),
    id           BIGINT NOT NULL,
    name         TEXT NOT NULL,
    barcode      TEXT,
    details      TEXT,
    tags         TEXT,
    unit         DOUBLE PRECISION,
    images       TEXT NOT NULL DEFAULT '[]',
    category_ids TEXT NOT NULL DEFAULT '[]',
    created_at   BIGINT NOT NULL,
    active_date  BIGINT,
    delete_date  BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id)
);
CREATE INDEX products_barcode ON products (merchant_id, barcode);

CREATE TABLE product_instances (
    merchant_id    BIGINT NOT NULL,
    id             BIGINT NOT NULL,
    product_id     BIGINT NOT NULL,
    name           TEXT,
    price          TEXT NOT NULL,
    tax_percentage TEXT NOT NULL,
    size           TEXT,
    tags           TEXT,
    active_date    BIGINT,
    delete_date    BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, product_id) REFERENCES products (merchant_id, id)
);
CREATE INDEX product_instances_product ON product_instances (merchant_id, product_id);
