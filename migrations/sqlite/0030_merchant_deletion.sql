-- A merchant the operator deleted (docs/operator.md, "Deleting"): suspended at once, its rows
-- removed by every replica's sweep once this time (Unix millis) has passed; resuming it before
-- then cancels the deletion.
ALTER TABLE merchants ADD COLUMN delete_after BIGINT;
-- The sweep's question, answered without reading every merchant's row.
CREATE INDEX merchants_due_for_deletion ON merchants (delete_after) WHERE delete_after IS NOT NULL;
