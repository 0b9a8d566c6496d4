-- Uploaded files are kept per merchant (docs/operator.md, "Deleting"): the same bytes uploaded
-- by two merchants are two rows under one name (content-addressed, so either serves it), each
-- merchant's own. Before, the first uploader's row served both, and deleting or moving that
-- merchant took the file from the other.
ALTER TABLE files DROP CONSTRAINT files_pkey;
ALTER TABLE files DROP CONSTRAINT files_file_name_key;
ALTER TABLE files ADD PRIMARY KEY (merchant_id, sha256);
DROP INDEX files_by_merchant;
CREATE INDEX files_by_name ON files (file_name);
