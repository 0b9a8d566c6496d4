-- Sales rows are inserted open and then updated as they complete, which leaves a dead entry in
-- the partial indexes of open records (baskets_open, transactions_pending, ...) until VACUUM
-- removes it. Activation reads exactly those indexes, so vacuum these tables after 1 % of
-- their rows changed (the default waits for 20 %).
ALTER TABLE baskets SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);
ALTER TABLE basket_lines SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);
ALTER TABLE transactions SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);
ALTER TABLE orders SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);
ALTER TABLE invoices SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);
ALTER TABLE stock_reconciliations SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);
