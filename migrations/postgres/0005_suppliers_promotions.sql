-- Suppliers, their stores (depots, branches) and promotions, owned by the merchant supervisors.
-- Decimals (promotion x, y) are TEXT; id and day lists are JSON arrays as TEXT.

CREATE TABLE suppliers (
    merchant_id    BIGINT NOT NULL REFERENCES merchants (id),
    id             BIGINT NOT NULL,
    name           TEXT NOT NULL,
    description    TEXT,
    company_number TEXT,
    vat_number     TEXT,
    note           TEXT,
    active_date    BIGINT,
    delete_date    BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id)
);

CREATE TABLE supplier_stores (
    merchant_id   BIGINT NOT NULL REFERENCES merchants (id),
    id            BIGINT NOT NULL,
    supplier_id   BIGINT NOT NULL,
    name          TEXT,
    address_line1 TEXT,
    address_line2 TEXT,
    address_line3 TEXT,
    city          TEXT,
    postcode      TEXT,
    country_id    TEXT,
    phone_number  TEXT,
    email         TEXT,
    lat           DOUBLE PRECISION,
    lng           DOUBLE PRECISION,
    active_date   BIGINT,
    delete_date   BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, supplier_id) REFERENCES suppliers (merchant_id, id)
);

CREATE TABLE promotions (
    merchant_id    BIGINT NOT NULL REFERENCES merchants (id),
    id             BIGINT NOT NULL,
    title          TEXT NOT NULL,
    details        TEXT,
    terms          TEXT,
    promotion_type TEXT NOT NULL,
    x              TEXT NOT NULL,
    y              TEXT,
    store_ids      TEXT NOT NULL,
    product_ids    TEXT NOT NULL,
    category_ids   TEXT NOT NULL,
    start_date     BIGINT NOT NULL,
    end_date       BIGINT,
    days_available TEXT NOT NULL,
    automatic      BIGINT NOT NULL,
    active_date    BIGINT,
    delete_date    BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id)
);
