-- Every committed write of a merchant takes the next version, under the merchant row's lock:
-- replicas compare it with the version their cached state was loaded at.
ALTER TABLE merchants ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
