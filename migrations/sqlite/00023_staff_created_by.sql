-- +goose Up
-- Who created each staff account (issue 28 item 8): staff:<username> for an
-- account added in the console, cli for `seatflow staff add`, '' for the
-- accounts that predate this column (nobody recorded). Four eyes on money
-- use it: the creator chose the account's first password, so the two are
-- never counted as two people (core/foureyes.go).
ALTER TABLE staff ADD COLUMN created_by TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE staff DROP COLUMN created_by;
