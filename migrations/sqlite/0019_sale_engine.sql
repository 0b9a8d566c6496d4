-- The sale engine (docs/money-and-tax.md). A merchant's pricing settings, from its manifest's
-- [sales] table, as JSON; a price instance may carry named tax rates; a promotion may stack on
-- others; a basket names the promotions applied by hand and keeps its priced receipt (JSON),
-- recomputed at each write while open and frozen by completion.
ALTER TABLE merchants ADD COLUMN sales TEXT NOT NULL DEFAULT '{}';
ALTER TABLE product_instances ADD COLUMN tax_codes TEXT NOT NULL DEFAULT '[]';
ALTER TABLE promotions ADD COLUMN stackable BIGINT NOT NULL DEFAULT 0;
ALTER TABLE baskets ADD COLUMN promotion_ids TEXT NOT NULL DEFAULT '[]';
ALTER TABLE baskets ADD COLUMN receipt TEXT;
-- A linked return line names the sale line it gives back; `restock` = 0 writes its units off.
ALTER TABLE basket_lines ADD COLUMN return_of TEXT;
ALTER TABLE basket_lines ADD COLUMN restock BIGINT NOT NULL DEFAULT 1;
-- A linked refund names the payment it gives money back on.
ALTER TABLE transactions ADD COLUMN refund_of BIGINT;
