-- The cached state of a merchant holds its open sales records; activation reads exactly those
-- through these partial indexes, so its cost does not grow with the finished history. Reads
-- of history by store use the (merchant_id, store_id, ...) indexes.

CREATE INDEX baskets_open ON baskets (merchant_id, id)
    WHERE completed = 0 AND delete_date IS NULL;

CREATE INDEX transactions_pending ON transactions (merchant_id, id)
    WHERE completed = 0 AND delete_date IS NULL;

CREATE INDEX orders_open ON orders (merchant_id, id)
    WHERE NOT (status IN ('completed', 'cancelled')) AND delete_date IS NULL;
CREATE INDEX orders_store ON orders (merchant_id, store_id, id);

CREATE INDEX invoices_open ON invoices (merchant_id, id)
    WHERE completed = 0 AND delete_date IS NULL;
CREATE INDEX invoices_store ON invoices (merchant_id, store_id, id);

CREATE INDEX stock_reconciliations_open ON stock_reconciliations (merchant_id, id)
    WHERE completed = 0 AND delete_date IS NULL;
