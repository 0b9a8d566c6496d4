-- PostgreSQL only: SQLite has no MVCC dead rows to vacuum (the same file name keeps both
-- folders in step).
SELECT 1;
