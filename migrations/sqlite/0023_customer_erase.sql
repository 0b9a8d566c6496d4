-- When a customer's personal data was erased (docs/customers.md, "Export and erase").
ALTER TABLE customers ADD COLUMN erase_date BIGINT;
