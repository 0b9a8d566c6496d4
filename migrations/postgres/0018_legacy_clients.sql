-- A merchant may let the applications it registered use the old Shopwave client libraries'
-- conventions (comma-separated old scope names, 0.x or no x-accept-version, GET /login, the
-- report's from/to headers): `legacy_clients = true` in its manifest. Off by default.
ALTER TABLE merchants ADD COLUMN legacy_clients BIGINT NOT NULL DEFAULT 0;
