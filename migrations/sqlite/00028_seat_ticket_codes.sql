-- +goose Up
-- Per-seat tickets (issue 31); see migrations/mysql/00028_seat_ticket_codes.sql.
-- SQLite cannot add NOT NULL to a column later: '' until the backfill, then
-- the UNIQUE index and the insert path (which always writes a code) keep
-- every row's own.
ALTER TABLE order_seat ADD COLUMN ticket_code TEXT NOT NULL DEFAULT '';

-- The rows there already get theirs here, at random (one random() per
-- character, its low 5 bits as the digit); the second pass draws again for
-- codes two rows share, before the unique index goes on.
UPDATE order_seat SET ticket_code =
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1);
UPDATE order_seat SET ticket_code =
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1) ||
  substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', (random() & 31) + 1, 1)
 WHERE ticket_code IN (SELECT ticket_code FROM order_seat GROUP BY ticket_code HAVING COUNT(*) > 1);

CREATE UNIQUE INDEX order_seat_uk_ticket_code ON order_seat (ticket_code);

-- +goose Down
DROP INDEX order_seat_uk_ticket_code;
ALTER TABLE order_seat DROP COLUMN ticket_code;
