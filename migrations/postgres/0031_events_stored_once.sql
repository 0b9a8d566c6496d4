-- Events (docs/events.md, "The log"): from this release, an event whose object is the one of the
-- event appended just before it is stored with an empty `data` and read back as that event's.
-- A server of an earlier release would send the empty text as the event's object. This
-- migration marks the format: an earlier release refuses to start on a database that has it
-- (its migrator does not know it), and a merchant's archive, which names its schema, goes only
-- into a database at the same one.
SELECT 1;
