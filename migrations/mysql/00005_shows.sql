-- +goose Up
-- Shows and seat plans (issue 11, part 1). Times are BIGINT epoch
-- milliseconds (UTC), as in 00001.

-- status: 0 on sale, 1 cancelled. plan_version goes up with every plan
-- change, so a placement priced from a cached plan can tell it is stale.
-- seat_count is kept with the plan, so the shows list needs no seat scan.
ALTER TABLE show_info
  ADD COLUMN currency CHAR(3) NOT NULL DEFAULT 'EUR',
  ADD COLUMN sales_end BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN status TINYINT NOT NULL DEFAULT 0,
  ADD COLUMN cancelled_at BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN plan_version INT NOT NULL DEFAULT 1,
  ADD COLUMN seat_count INT NOT NULL DEFAULT 0;

UPDATE show_info SET seat_count = (SELECT COUNT(*) FROM seat WHERE seat.show_id = show_info.id);

-- A seat's place on the plan; price_cents stays the seat's price (its
-- category's), so placing an order reads one table.
ALTER TABLE seat
  ADD COLUMN section VARCHAR(64) NOT NULL DEFAULT '',
  ADD COLUMN row_label VARCHAR(16) NOT NULL DEFAULT '',
  ADD COLUMN seat_number INT NOT NULL DEFAULT 0,
  ADD COLUMN category VARCHAR(16) NOT NULL DEFAULT '',
  ADD COLUMN x INT NOT NULL DEFAULT 0,
  ADD COLUMN y INT NOT NULL DEFAULT 0;

CREATE TABLE price_category (
  show_id BIGINT NOT NULL,
  code VARCHAR(16) NOT NULL,
  name VARCHAR(100) NOT NULL,
  price_cents BIGINT NOT NULL,
  PRIMARY KEY (show_id, code)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- A blocked seat is not for sale to the public (house, wheelchair,
-- technical). The truth; Redis keeps a derived copy.
CREATE TABLE seat_block (
  show_id BIGINT NOT NULL,
  seat_id VARCHAR(16) NOT NULL,
  reason VARCHAR(16) NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (show_id, seat_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
DROP TABLE seat_block;
DROP TABLE price_category;
ALTER TABLE seat DROP COLUMN section, DROP COLUMN row_label, DROP COLUMN seat_number,
  DROP COLUMN category, DROP COLUMN x, DROP COLUMN y;
ALTER TABLE show_info DROP COLUMN currency, DROP COLUMN sales_end, DROP COLUMN status,
  DROP COLUMN cancelled_at, DROP COLUMN plan_version, DROP COLUMN seat_count;
