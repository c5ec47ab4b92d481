-- +goose Up
-- Customers, short codes and order search (issue 11, parts 2 and 3). Times
-- are BIGINT epoch milliseconds (UTC), as in 00001.

-- The customer is optional: '' when the order was placed without one. The
-- email is stored lower-cased and the phone normalized (digits, optional
-- leading +), so exact and prefix searches compare like with like.
-- code is the order's short code (8 characters of Crockford base32).
ALTER TABLE order_info ADD COLUMN code TEXT;
ALTER TABLE order_info ADD COLUMN customer_name TEXT NOT NULL DEFAULT '';
ALTER TABLE order_info ADD COLUMN customer_email TEXT NOT NULL DEFAULT '';
ALTER TABLE order_info ADD COLUMN customer_phone TEXT NOT NULL DEFAULT '';

-- Orders from before this migration get a code derived from their id:
-- id * 2654435761 mod 2^40 is a bijection on 40-bit values (the factor is
-- odd), so the backfilled codes are unique without a retry loop SQL cannot
-- express; written as 8 base32 digits. New orders draw theirs at random
-- (core.NewOrderCode) and retry if one of these is taken.
UPDATE order_info SET code =
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 35 & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 30 & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 25 & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 20 & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 15 & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 10 & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 5 & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((id * 2654435761) & 1099511627775 & 31) + 1, 1);

-- SQLite cannot add NOT NULL to a column; the UNIQUE index and the insert
-- path (which always writes a code) keep it filled.
CREATE UNIQUE INDEX order_info_uk_code ON order_info (code);
-- Search and lists, newest first (every SQLite index ends with the rowid id).
CREATE INDEX order_info_idx_email_created ON order_info (customer_email, created_at);
CREATE INDEX order_info_idx_phone_created ON order_info (customer_phone, created_at);
CREATE INDEX order_info_idx_user_created ON order_info (user_id, created_at);
CREATE INDEX order_info_idx_status_created ON order_info (status, created_at);
CREATE INDEX order_info_idx_show_created ON order_info (show_id, created_at);
CREATE INDEX order_info_idx_show_status_created ON order_info (show_id, status, created_at);

-- Customer names, full-text: an external-content FTS5 table over
-- order_info, kept in step by triggers.
CREATE VIRTUAL TABLE order_customer_fts USING fts5(customer_name, content='order_info', content_rowid='id');
INSERT INTO order_customer_fts (rowid, customer_name) SELECT id, customer_name FROM order_info WHERE customer_name <> '';
-- +goose StatementBegin
CREATE TRIGGER order_info_fts_insert AFTER INSERT ON order_info WHEN new.customer_name <> '' BEGIN
  INSERT INTO order_customer_fts (rowid, customer_name) VALUES (new.id, new.customer_name);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER order_info_fts_delete AFTER DELETE ON order_info WHEN old.customer_name <> '' BEGIN
  INSERT INTO order_customer_fts (order_customer_fts, rowid, customer_name) VALUES ('delete', old.id, old.customer_name);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER order_info_fts_update AFTER UPDATE OF customer_name ON order_info BEGIN
  INSERT INTO order_customer_fts (order_customer_fts, rowid, customer_name) SELECT 'delete', old.id, old.customer_name WHERE old.customer_name <> '';
  INSERT INTO order_customer_fts (rowid, customer_name) SELECT new.id, new.customer_name WHERE new.customer_name <> '';
END;
-- +goose StatementEnd

-- Every seat an order was placed with, kept after a cancel (order_seat
-- rows go with the hold): the seat search reads it, newest first.
CREATE TABLE order_placed_seat (
  seat_id TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  order_id BIGINT NOT NULL,
  PRIMARY KEY (seat_id, created_at, order_id)
) WITHOUT ROWID;

-- The seats of the orders placed before this migration, from seat_ids.
INSERT INTO order_placed_seat (seat_id, created_at, order_id)
WITH RECURSIVE split (order_id, created_at, seat_id, rest) AS (
  SELECT id, created_at, '', seat_ids || ',' FROM order_info WHERE seat_ids <> ''
  UNION ALL
  SELECT order_id, created_at, substr(rest, 1, instr(rest, ',') - 1), substr(rest, instr(rest, ',') + 1)
    FROM split WHERE rest <> ''
)
SELECT seat_id, created_at, order_id FROM split WHERE seat_id <> '';

-- +goose Down
DROP TABLE order_placed_seat;
DROP TRIGGER order_info_fts_update;
DROP TRIGGER order_info_fts_delete;
DROP TRIGGER order_info_fts_insert;
DROP TABLE order_customer_fts;
DROP INDEX order_info_idx_show_status_created;
DROP INDEX order_info_idx_show_created;
DROP INDEX order_info_idx_status_created;
DROP INDEX order_info_idx_user_created;
DROP INDEX order_info_idx_phone_created;
DROP INDEX order_info_idx_email_created;
DROP INDEX order_info_uk_code;
ALTER TABLE order_info DROP COLUMN customer_phone;
ALTER TABLE order_info DROP COLUMN customer_email;
ALTER TABLE order_info DROP COLUMN customer_name;
ALTER TABLE order_info DROP COLUMN code;
