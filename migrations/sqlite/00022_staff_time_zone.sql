-- +goose Up
-- The zone a member of staff sees the console's times in (issue 15): an
-- IANA name such as Europe/Berlin, or '' for the server's zone, which is
-- every account's until its owner picks one.
ALTER TABLE staff ADD COLUMN time_zone TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE staff DROP COLUMN time_zone;
