-- Sign-in sessions serve two pages: the consent step of /oauth/authorize (`consent`, short and
-- used once) and the connected-applications page (`account`). The purpose keeps one from
-- standing in for the other; both go with their employee when the employee is deleted.
ALTER TABLE oauth_sessions ADD COLUMN purpose TEXT NOT NULL DEFAULT 'consent';
