-- +goose Up
-- Per-seat tickets (issue 31). Every order_seat row has its own ticket
-- code, 10 characters of Crockford base32 (core/seattickets.go), drawn
-- from crypto/rand when the row is inserted (core/store/seatcodes.go) and
-- deleted with the row: a seat that leaves its order (partial refund,
-- refund, cancel) takes its code along, and its printed ticket stops
-- admitting. The door finds a scanned seat code by uk_ticket_code.
ALTER TABLE order_seat ADD COLUMN ticket_code CHAR(10) NULL;

-- The rows there already get theirs here, at random: one RANDOM_BYTES byte
-- (MariaDB 10.10 on) per character, its low 5 bits as the digit, like
-- core.NewSeatCode. The second pass draws again for codes two rows share
-- (rare at 50 bits, not impossible in a large table) before the unique key
-- goes on; the derived table is materialized (GROUP BY), so MariaDB lets
-- the UPDATE read its own table.
UPDATE order_seat SET ticket_code = CONCAT(
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1));
UPDATE order_seat SET ticket_code = CONCAT(
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1),
  SUBSTRING('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (ASCII(RANDOM_BYTES(1)) & 31) + 1, 1))
 WHERE ticket_code IN (SELECT c FROM (SELECT ticket_code AS c FROM order_seat
   GROUP BY ticket_code HAVING COUNT(*) > 1) AS dup);

ALTER TABLE order_seat
  MODIFY ticket_code CHAR(10) NOT NULL,
  ADD UNIQUE KEY uk_ticket_code (ticket_code);

-- +goose Down
ALTER TABLE order_seat
  DROP INDEX uk_ticket_code,
  DROP COLUMN ticket_code;
