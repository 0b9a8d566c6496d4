-- A supplier's terms for a product (domain::catalogue::supplier::SupplierProductRecord): its
-- code in the supplier's catalogue and what a unit costs from it, in minor units as decimal
-- text.

CREATE TABLE supplier_products (
    merchant_id  BIGINT NOT NULL REFERENCES merchants (id),
    id           BIGINT NOT NULL,
    supplier_id  BIGINT NOT NULL,
    product_id   BIGINT NOT NULL,
    code         TEXT,
    unit_cost    TEXT,
    active_date  BIGINT,
    delete_date  BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, supplier_id) REFERENCES suppliers (merchant_id, id),
    FOREIGN KEY (merchant_id, product_id) REFERENCES products (merchant_id, id)
);

CREATE INDEX supplier_products_supplier ON supplier_products (merchant_id, supplier_id);
CREATE INDEX supplier_products_product ON supplier_products (merchant_id, product_id);
