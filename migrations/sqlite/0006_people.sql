-- People and applications managed through the API (/employee, /application).

-- Per-store roles of an employee: JSON text {"<storeId>": <roleId>, ...}.
ALTER TABLE employees ADD COLUMN stores TEXT NOT NULL DEFAULT '{}';

-- Deleting an employee or an application, or replacing an application's secret, revokes their
-- access tokens (families are already indexed by employee and by application).
CREATE INDEX access_tokens_employee ON access_tokens (merchant_id, employee_id);
CREATE INDEX access_tokens_application ON access_tokens (application_id);
