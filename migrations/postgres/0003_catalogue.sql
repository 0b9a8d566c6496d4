-- Catalogue tables owned by the merchant supervisors. Each row belongs to one merchant; ids are
-- unique across merchants, and every statement filters by merchant_id.

CREATE TABLE categories (
    merchant_id BIGINT NOT NULL REFERENCES merchants (id),
    id          BIGINT NOT NULL,
    title       TEXT NOT NULL,
    parent_id   BIGINT,
    active_date BIGINT,
    delete_date BIGINT,
    PRIMARY KEY (merchant_id, id),
    UNIQUE (id)
);
