-- +goose Up
-- Customers, short codes and order search (issue 11, parts 2 and 3). Times
-- are BIGINT epoch milliseconds (UTC), as in 00001.

-- The customer is optional: '' when the order was placed without one. The
-- email is stored lower-cased and the phone normalized (digits, optional
-- leading +), so exact and prefix searches compare like with like.
-- code is the order's short code (8 characters of Crockford base32).
ALTER TABLE order_info
  ADD COLUMN code CHAR(8) NULL,
  ADD COLUMN customer_name VARCHAR(100) NOT NULL DEFAULT '',
  ADD COLUMN customer_email VARCHAR(254) NOT NULL DEFAULT '',
  ADD COLUMN customer_phone VARCHAR(20) NOT NULL DEFAULT '';

-- Orders from before this migration get a code derived from their id:
-- id * 2654435761 mod 2^40 is a bijection on 40-bit values (the factor is
-- odd), so the backfilled codes are unique without a retry loop SQL cannot
-- express; written as 8 base32 digits. New orders draw theirs at random
-- (core.NewOrderCode) and retry if one of these is taken.
UPDATE order_info SET code = CONCAT(
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 35 & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 30 & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 25 & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 20 & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 15 & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 10 & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (((id * 2654435761) & 1099511627775) >> 5 & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', ((id * 2654435761) & 1099511627775 & 31) + 1, 1));

ALTER TABLE order_info
  MODIFY code CHAR(8) NOT NULL,
  ADD UNIQUE KEY uk_code (code),
  -- Search and lists, newest first (InnoDB appends the primary key id to
  -- every secondary index, so each of these is also ordered by id).
  ADD KEY idx_email_created (customer_email, created_at),
  ADD KEY idx_phone_created (customer_phone, created_at),
  ADD KEY idx_user_created (user_id, created_at),
  ADD KEY idx_status_created (status, created_at),
  ADD KEY idx_show_created (show_id, created_at),
  ADD KEY idx_show_status_created (show_id, status, created_at),
  ADD FULLTEXT KEY ft_customer_name (customer_name);

-- Every seat an order was placed with, kept after a cancel (order_seat
-- rows go with the hold): the seat search reads it, newest first.
CREATE TABLE order_placed_seat (
  seat_id VARCHAR(16) NOT NULL,
  created_at BIGINT NOT NULL,
  order_id BIGINT NOT NULL,
  PRIMARY KEY (seat_id, created_at, order_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The seats of the orders placed before this migration, from seat_ids.
INSERT INTO order_placed_seat (seat_id, created_at, order_id)
WITH RECURSIVE split (order_id, created_at, seat_id, rest) AS (
  SELECT id, created_at, SUBSTRING_INDEX(seat_ids, ',', 1),
         IF(LOCATE(',', seat_ids) > 0, SUBSTRING(seat_ids, LOCATE(',', seat_ids) + 1), '')
    FROM order_info WHERE seat_ids <> ''
  UNION ALL
  SELECT order_id, created_at, SUBSTRING_INDEX(rest, ',', 1),
         IF(LOCATE(',', rest) > 0, SUBSTRING(rest, LOCATE(',', rest) + 1), '')
    FROM split WHERE rest <> ''
)
SELECT seat_id, created_at, order_id FROM split;

-- +goose Down
DROP TABLE order_placed_seat;
ALTER TABLE order_info
  DROP INDEX ft_customer_name,
  DROP INDEX idx_show_status_created,
  DROP INDEX idx_show_created,
  DROP INDEX idx_status_created,
  DROP INDEX idx_user_created,
  DROP INDEX idx_phone_created,
  DROP INDEX idx_email_created,
  DROP INDEX uk_code,
  DROP COLUMN customer_phone,
  DROP COLUMN customer_email,
  DROP COLUMN customer_name,
  DROP COLUMN code;
