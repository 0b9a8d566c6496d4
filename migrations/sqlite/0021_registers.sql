-- Registers (docs/registers.md): the tills of a store.
CREATE TABLE registers (
    merchant_id BIGINT NOT NULL REFERENCES merchants (id),
    id          BIGINT NOT NULL,
    store_id    BIGINT NOT NULL,
    name        TEXT NOT NULL,
    active_date BIGINT,
    delete_date BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id),
    FOREIGN KEY (merchant_id, store_id) REFERENCES stores (merchant_id, id)
);
