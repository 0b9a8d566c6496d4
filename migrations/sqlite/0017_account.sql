-- Connected applications (/account). `last_used_at` is when an access token of the family was
-- last presented to the API, recorded off the request path at most once a minute per family
-- and process, so it is accurate to about a minute; NULL until the first use.
ALTER TABLE oauth_families ADD COLUMN last_used_at BIGINT;

-- Sign-in sessions serve two pages: the consent step of /oauth/authorize (`consent`, short and
-- used once) and the connected-applications page (`account`). The purpose keeps one from
-- standing in for the other; both go with their employee when the employee is deleted.
ALTER TABLE oauth_sessions ADD COLUMN purpose TEXT NOT NULL DEFAULT 'consent';
